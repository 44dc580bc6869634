import type { Request, RequestHandler, Response, Router } from 'express';
import type { EmailShares } from '../../core/emails/index.js';
import type { Logger } from '../../core/logger.js';
import { make } from '../errors.js';
import { sendError } from '../middleware/send-error.js';

// Public routes of sent mail, outside the contract layer (no key, no team token, no request
// log): the link is the credential, and `limited` (the per-client bucket) goes first. Signed attachment downloads (15 minutes) are always
// downloads; a share link opens a read-only page of one message. An unknown, expired or revoked
// share link all get the same 404.

const servedAsIs = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain', 'text/csv', 'text/calendar', 'application/zip']);

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function sentEmailRoutes(router: Router, limited: RequestHandler, shares: EmailShares, logger: Logger): void {
  router.get('/downloads/sent/:token', limited, async (req: Request<{ token: string }>, res: Response) => {
    try {
      const part = await shares.download(req.params.token);
      if (!part) return sendError(res, make(404, 'not_found', 'This download link is invalid or has expired.'));
      res.attachment(part.filename ?? 'attachment');
      res.setHeader('content-type', servedAsIs.has(part.content_type) ? part.content_type : 'application/octet-stream');
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('content-security-policy', "default-src 'none'; sandbox");
      res.setHeader('cache-control', 'private, no-store');
      res.end(req.method === 'HEAD' ? undefined : part.content);
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'sent attachment download failed');
      sendError(res, make(500, 'application_error', 'The download failed.'));
    }
  });
  router.get('/share/emails/:token', limited, async (req: Request<{ token: string }>, res: Response) => {
    try {
      const shared = await shares.open(req.params.token);
      res.setHeader('cache-control', 'private, no-store');
      res.setHeader('referrer-policy', 'no-referrer');
      res.setHeader('x-robots-tag', 'noindex, nofollow');
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('x-frame-options', 'DENY');
      // The message's own HTML renders in a sandboxed frame: no scripts, no forms, no top navigation.
      res.setHeader('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; frame-src 'self'; frame-ancestors 'none'");
      if (!shared) return void res.status(404).type('html').send('<!doctype html><title>Not found</title><p>This link is not valid.</p>');
      res.type('html').send(page(shared));
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'share page failed');
      res.status(500).type('text').send('The page could not be shown.');
    }
  });
}

function page(shared: NonNullable<Awaited<ReturnType<EmailShares['open']>>>): string {
  const { email, attachments } = shared;
  const list = (json: string | null) => (json ? (JSON.parse(json) as { header: string }[]).map((m) => m.header).join(', ') : '');
  const rows = [['From', email.from_header], ['To', list(email.to_json)], ['Cc', list(email.cc_json)], ['Subject', email.subject], ['Date', email.created_at]]
    .filter(([, v]) => v).map(([k, v]) => `<tr><th>${k}</th><td>${escapeHtml(v!)}</td></tr>`).join('');
  const body = email.html !== null
    ? `<iframe sandbox="" referrerpolicy="no-referrer" srcdoc="${escapeHtml(email.html)}" style="width:100%;height:70vh;border:1px solid #ddd"></iframe>`
    : `<pre style="white-space:pre-wrap">${escapeHtml(email.text ?? '')}</pre>`;
  const parts = attachments.length ? `<p>Attachments: ${attachments.map((a) => escapeHtml(a.filename ?? 'attachment')).join(', ')}</p>` : '';
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>${escapeHtml(email.subject)}</title></head>`
    + `<body style="font-family:sans-serif;max-width:60rem;margin:1rem auto"><table>${rows}</table>${parts}${body}`
    + `<p style="color:#888">Shared read-only view; the link expires at ${escapeHtml(shared.expiresAt)}.</p></body></html>`;
}
