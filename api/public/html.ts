import { createHash } from 'node:crypto';
import type { Response } from 'express';

// Plain HTML pages of the public routes that people open in a browser (the unsubscribe and
// preference pages): no script, no external resource, one inline style block allowed by its hash.

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for an HTML text node or a quoted attribute value. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => entities[c]!);

export interface HtmlPage {
  title: string;
  /** The body's markup, already escaped where it holds outside text. */
  body: string;
  /** The one style block (trusted: built by the page, never from outside text). */
  style: string;
  /** After `main`, so it is the page's contentinfo landmark (escaped like `body`). */
  footer?: string;
}

export function renderPage(page: HtmlPage): string {
  return '<!doctype html><html lang="en"><head><meta charset="utf-8">'
    + '<meta name="viewport" content="width=device-width, initial-scale=1">'
    + '<meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">'
    + `<title>${escapeHtml(page.title)}</title><style>${page.style}</style></head>`
    + `<body><main>${page.body}</main>${page.footer ?? ''}</body></html>`;
}

/** The CSP of a page: nothing loads, nothing runs; its style block by hash, forms only to itself. */
export function pagePolicy(style: string): string {
  const hash = createHash('sha256').update(style, 'utf8').digest('base64');
  return `default-src 'none'; style-src 'sha256-${hash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
}

export function sendPage(res: Response, status: number, page: HtmlPage): void {
  res.setHeader('cache-control', 'private, no-store');
  res.setHeader('content-security-policy', pagePolicy(page.style));
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-robots-tag', 'noindex, nofollow');
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('x-frame-options', 'DENY');
  res.status(status).type('html').send(renderPage(page));
}
