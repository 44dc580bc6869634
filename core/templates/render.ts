import type { BrandToken, Node } from './placeholders.js';
import { lookup, shows, type AudienceFacts, type RenderContact, type ShowWhen } from './show-when.js';

// Rendering one recipient: a walk over a program compiled once per version, joining strings.
// Values are HTML-escaped in the html part and inserted raw in the subject and text; a value is
// never read for placeholders again (a value holding `{{other}}` stays as written).

export const REPEAT_MAX = 50;

/** What a marker of a visual template stands for. */
export type Condition =
  | { kind: 'show'; rule: ShowWhen }
  /** Shown when the brand token has a value (the logo). */
  | { kind: 'brand'; token: BrandToken }
  /** Shown when the data slot has a value (the contact's unsubscribe link). */
  | { kind: 'data'; path: string[] };

export interface Markers {
  conditions: ReadonlyMap<number, Condition>;
  /** Repeat group → where its items are (`event.items`). */
  repeats: ReadonlyMap<number, string[]>;
}

export interface RenderValues {
  /** Declared variables' text (unescaped). */
  variables: ReadonlyMap<string, string>;
  brand: Readonly<Record<BrandToken, string>>;
  event?: unknown;
  contact?: RenderContact | null;
  audience?: AudienceFacts | null;
  /**
   * A campaign or flow send: show-when rules are decided and repeat groups drawn. Otherwise
   * (POST /emails, previews, tests) every block shows and no repeat, cart or recommendation is drawn.
   */
  perContact: boolean;
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => escapes[c]!);

export function render(nodes: readonly Node[], html: boolean, values: RenderValues, markers: Markers): string {
  const out: string[] = [];
  walk(nodes, html, values, markers, undefined, out);
  return out.join('');
}

function walk(nodes: readonly Node[], html: boolean, values: RenderValues, markers: Markers, item: unknown, out: string[]): void {
  for (const node of nodes) {
    switch (node.k) {
      case 'lit':
        out.push(node.s);
        break;
      case 'var':
      case 'brand': {
        const text = node.k === 'var' ? values.variables.get(node.key) ?? '' : values.brand[node.key];
        out.push(html ? escapeHtml(text) : text);
        break;
      }
      case 'data': {
        const value = dataValue(node.scope, node.path, values, item);
        const text = value === undefined || value === null || value === '' ? node.fallback
          : node.format ? node.format(value) : typeof value === 'object' ? JSON.stringify(value) : String(value);
        // The fallback is template text, already in the part's own form; a value is escaped.
        out.push(html && text !== node.fallback ? escapeHtml(text) : text);
        break;
      }
      case 'if':
        if (visible(markers.conditions.get(node.id), values, item)) walk(node.body, html, values, markers, item, out);
        break;
      case 'each': {
        if (!values.perContact) break;
        const source = markers.repeats.get(node.id);
        const items = source ? dataValue(source[0] as 'event', source.slice(1), values, item) : undefined;
        if (!Array.isArray(items)) break;
        for (const one of items.slice(0, REPEAT_MAX)) walk(node.body, html, values, markers, one, out);
        break;
      }
    }
  }
}

function dataValue(scope: string, path: readonly string[], values: RenderValues, item: unknown): unknown {
  if (scope === 'item') return lookup(item, path);
  if (scope === 'event') return lookup(values.event, path);
  const contact = values.contact;
  if (!contact) return undefined;
  if (path[0] === 'properties') return lookup(contact.properties, path.slice(1));
  return path.length === 1 ? (contact as unknown as Record<string, unknown>)[path[0]!] : undefined;
}

function visible(condition: Condition | undefined, values: RenderValues, item: unknown): boolean {
  if (!condition) return true;
  switch (condition.kind) {
    case 'brand':
      return values.brand[condition.token] !== '';
    case 'data': {
      const value = dataValue(condition.path[0]!, condition.path.slice(1), values, item);
      return value !== undefined && value !== null && value !== '';
    }
    case 'show':
      return !values.perContact || shows(condition.rule, values.contact ?? null, values.audience ?? null, values.event);
  }
}
