import { decodeAttribute, scanHtml } from './html-scan.js';
import { MAX_TRACKED_URL_BYTES, type TrackingTokens } from './tokens.js';

// The HTML part of one recipient's message with tracking: each followable link of <a>/<area> sent
// through the tracking host (click tracking), and a 1×1 image before </body> (open tracking). Only
// the href value's span changes; every other byte is copied. The text part is never touched.
//
// Never rewritten: links that are not absolute http(s) URLs (mailto:, tel:, #fragment, relative,
// javascript:), links whose value holds a character reference this code does not decode exactly,
// links longer than MAX_TRACKED_URL_BYTES, a tag marked `data-svc-notrack`, the URLs of the email's
// List-Unsubscribe header, svc's own unsubscribe and preference pages (`…/unsubscribe/<token>`,
// `…/preferences/<token>`) and any link naming "unsubscribe": following it must never count as
// a click, and a scanner's visit must never look like one.

export interface TrackingPlan {
  emailId: string;
  recipientIdx: number;
  /** Unix seconds: when this recipient's message is composed. */
  mintedAt: number;
  /** scheme://host[:port][/prefix] the tracking routes answer on, no trailing slash. */
  base: string;
  open: boolean;
  click: boolean;
  /** Links never rewritten (the List-Unsubscribe header's URLs). */
  keep?: readonly string[];
}

export const openPath = (token: string) => `/t/o/${token}.gif`;
export const clickPath = (token: string) => `/t/c/${token}`;

const ownPages = /\/(unsubscribe|preferences)\/[A-Za-z0-9._~-]+\/?$/;

/** The URL a link should be tracked as, or undefined to leave it alone. */
export function trackableUrl(rawHref: string, keep: ReadonlySet<string>): string | undefined {
  const decoded = decodeAttribute(rawHref);
  if (decoded === undefined) return undefined;
  // What a browser follows: leading and trailing controls and spaces trimmed, tabs and newlines out.
  // eslint-disable-next-line no-control-regex
  const href = decoded.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  if (!/^https?:\/\//i.test(href)) return undefined;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return undefined;
  }
  if (!url.hostname || url.username || url.password) return undefined;
  if (Buffer.byteLength(href) > MAX_TRACKED_URL_BYTES) return undefined;
  if (keep.has(href) || keep.has(url.href)) return undefined;
  if (ownPages.test(url.pathname) || /unsubscribe/i.test(href)) return undefined;
  return href;
}

/** The pixel: inert, no alt text to show when images are off. */
const pixel = (src: string) => `<img src="${src}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;

export function rewriteHtml(html: string, plan: TrackingPlan, tokens: TrackingTokens): string {
  const keep = new Set(plan.keep ?? []);
  const edits: { start: number; end: number; text: string }[] = [];
  let bodyEnd = -1;
  let linkIdx = 0;
  scanHtml(html, (tag) => {
    if (!plan.click || (tag.name !== 'a' && tag.name !== 'area')) return;
    if (tag.attributes.some((a) => a.name === 'data-svc-notrack')) return;
    const href = tag.attributes.find((a) => a.name === 'href');
    if (!href || href.start === href.end) return;
    const url = trackableUrl(href.raw, keep);
    if (url === undefined || linkIdx > 0xffff) return;
    const token = tokens.mint({ kind: 'click', emailId: plan.emailId, recipientIdx: plan.recipientIdx, mintedAt: plan.mintedAt, linkIdx: linkIdx++, url });
    edits.push({ start: href.start, end: href.end, text: `"${plan.base}${clickPath(token)}"` });
  }, (name, start) => {
    if (name === 'body') bodyEnd = start;
  });
  if (plan.open) {
    const token = tokens.mint({ kind: 'open', emailId: plan.emailId, recipientIdx: plan.recipientIdx, mintedAt: plan.mintedAt });
    const at = bodyEnd >= 0 ? bodyEnd : html.length;
    edits.push({ start: at, end: at, text: pixel(`${plan.base}${openPath(token)}`) });
  }
  edits.sort((a, b) => a.start - b.start);
  let out = '';
  let from = 0;
  for (const e of edits) {
    out += html.slice(from, e.start) + e.text;
    from = e.end;
  }
  return out + html.slice(from);
}

/** The URLs of a List-Unsubscribe header value (`<https://…>, <mailto:…>`). */
export function listUnsubscribeUrls(headersJson: string | null): string[] {
  if (!headersJson) return [];
  const headers = JSON.parse(headersJson) as Record<string, string>;
  const value = Object.entries(headers).find(([name]) => name.toLowerCase() === 'list-unsubscribe')?.[1] ?? '';
  return [...value.matchAll(/<([^>]+)>/g)].map((m) => m[1]!.trim());
}
