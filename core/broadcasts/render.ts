import type { ContactRow } from '../../storage/repos/index.js';
import { escapeHtml, hasUnsubscribeVariable, renderMerge, type MergeValues } from '../content-checks/index.js';
import type { SendEmailInput } from '../emails/index.js';
import type { RecipientLinks } from '../preferences/index.js';
import type { PostalAddress } from '../team/index.js';
import type { BroadcastContent } from './gate.js';

// One recipient's message (spec Broadcast): merge variables filled from the contact, its
// properties and its own unsubscribe and preference links; a plain footer (unsubscribe link and
// postal address) when the body carries neither link variable; the List-Unsubscribe headers on
// every message; the preview text as the body's hidden first line.

export interface Sendable {
  from: string;
  subject: string;
  html: string | null;
  text: string | null;
  replyTo: string[] | null;
  previewText: string | null;
  topicId: string | null;
  postalAddress: PostalAddress;
  /** The footer is added when the body has no unsubscribe variable of its own. */
  needsFooter: boolean;
}

export function sendableOf(content: BroadcastContent, extra: { replyTo: string[] | null; previewText: string | null; topicId: string | null; postalAddress: PostalAddress }): Sendable {
  return {
    from: content.from!, subject: content.subject ?? '', html: content.html, text: content.text, ...extra,
    needsFooter: !hasUnsubscribeVariable(content.html, content.text),
  };
}

export function mergeValuesOf(contact: ContactRow, properties: ReadonlyMap<string, string | number | boolean> | undefined, links: RecipientLinks): MergeValues {
  const values = new Map<string, string | number | boolean | null>();
  for (const [key, value] of properties ?? []) values.set(key.toUpperCase(), value);
  values.set('FIRST_NAME', contact.first_name);
  values.set('LAST_NAME', contact.last_name);
  values.set('EMAIL', contact.email);
  values.set('UNSUBSCRIBE_URL', links.unsubscribeUrl);
  values.set('PREFERENCES_URL', links.preferencesUrl);
  return values;
}

export function postalLine(a: PostalAddress): string {
  const cityLine = [a.city, [a.state, a.postal_code].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  return [a.line1, a.line2, cityLine, a.country].filter(Boolean).join(', ');
}

/** The send request for one contact: one `to`, merged content, the unsubscribe headers. */
export function messageFor(s: Sendable, contact: ContactRow, values: MergeValues, fallbacks: MergeValues, links: RecipientLinks): SendEmailInput {
  // A value with a line break must not break the subject's one line.
  const subject = renderMerge(s.subject, values, fallbacks, 'text').replace(/[\r\n\0]+/g, ' ');
  let html = s.html === null ? null : renderMerge(s.html, values, fallbacks, 'html');
  let text = s.text === null ? null : renderMerge(s.text, values, fallbacks, 'text');
  if (html !== null && s.previewText) html = previewDiv(renderMerge(s.previewText, values, fallbacks, 'text')) + html;
  if (s.needsFooter) {
    const address = postalLine(s.postalAddress);
    if (html !== null) html += htmlFooter(links.unsubscribeUrl, address);
    if (text !== null) text += `\n\n--\nUnsubscribe: ${links.unsubscribeUrl}\n${address}\n`;
  }
  return {
    from: s.from, to: contact.email, subject, html, text,
    reply_to: s.replyTo, topic_id: s.topicId,
    headers: { ...links.headers },
  };
}

const previewDiv = (preview: string) =>
  `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">${escapeHtml(preview)}</div>`;

const htmlFooter = (unsubscribeUrl: string, address: string) =>
  `<p style="font-size:12px;color:#666666;margin-top:24px">` +
  `<a href="${escapeHtml(unsubscribeUrl)}">Unsubscribe</a><br>${escapeHtml(address)}</p>`;
