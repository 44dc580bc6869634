// Merge variables of campaign content (spec Broadcast): `{{{KEY}}}` or `{{{KEY|default}}}` in the
// subject and the bodies. Keys ignore case (a contact property's key is its merge variable). A
// missing value takes the inline default, then the property's fallback_value, then empty. Values
// are HTML-escaped in html and literal in text and the subject. The tokens are plain text, not
// HTML structure, so finding them is a scan of the text.

/** The variables svc itself knows for every contact. */
export const BUILT_IN_VARIABLES = ['FIRST_NAME', 'LAST_NAME', 'EMAIL', 'UNSUBSCRIBE_URL', 'PREFERENCES_URL'] as const;
export const UNSUBSCRIBE_VARIABLES = ['UNSUBSCRIBE_URL', 'PREFERENCES_URL'] as const;

const token = /\{\{\{\s*([A-Za-z0-9_.-]+)\s*(?:\|([^}]*))?\}\}\}/g;

export interface MergeToken {
  /** Upper-cased key. */
  key: string;
  /** The inline default, when the token has one (possibly empty). */
  fallback: string | undefined;
}

/** Every merge token in the text, in order. */
export function mergeTokens(text: string | null | undefined): MergeToken[] {
  if (!text) return [];
  return [...text.matchAll(token)].map((m) => ({ key: m[1]!.toUpperCase(), fallback: m[2] }));
}

export type MergeMode = 'html' | 'text';

/** A contact's values by upper-cased key; undefined or null is "missing". */
export type MergeValues = ReadonlyMap<string, string | number | boolean | null | undefined>;

const htmlEscapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => htmlEscapes[c]!);

/**
 * Replaces every token by its value: the contact's, else the inline default, else `fallbacks`
 * (property fallback values), else empty. In html the value is escaped; one pass, so a value that
 * itself looks like a token is inserted as it is, never merged again.
 */
export function renderMerge(text: string, values: MergeValues, fallbacks: MergeValues, mode: MergeMode): string {
  return text.replace(token, (_all, rawKey: string, inline: string | undefined) => {
    const key = rawKey.toUpperCase();
    const own = values.get(key);
    const chosen = own !== undefined && own !== null && own !== '' ? own : inline !== undefined ? inline : fallbacks.get(key) ?? '';
    const value = String(chosen);
    return mode === 'html' ? escapeHtml(value) : value;
  });
}

/** Whether the content carries its own unsubscribe or preferences link variable. */
export function hasUnsubscribeVariable(...texts: (string | null | undefined)[]): boolean {
  return texts.some((t) => mergeTokens(t).some((m) => (UNSUBSCRIBE_VARIABLES as readonly string[]).includes(m.key)));
}
