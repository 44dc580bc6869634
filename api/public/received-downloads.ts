import type { Request, RequestHandler, Response, Router } from 'express';
import type { ReceivingService } from '../../core/receiving/index.js';
import type { Logger } from '../../core/logger.js';
import { make } from '../errors.js';
import { sendError } from '../middleware/send-error.js';

// Signed downloads of received attachments and raw sources. No Authorization: the sealed token in
// the path is the credential (15 minutes). Mounted before the contract layer, so these paths are
// not API operations (no key, no team token, no request log); `limited` is the per-client bucket. Every answer is a download
// (Content-Disposition: attachment), never rendered: a type outside the allowlist is sent as
// application/octet-stream, and nosniff plus a sandboxing CSP cover browsers that would guess.
export function receivedDownloads(router: Router, limited: RequestHandler, service: ReceivingService, logger: Logger): void {
  router.get('/downloads/received/:token', limited, async (req: Request<{ token: string }>, res: Response) => {
    try {
      const file = await service.download(req.params.token);
      if (!file) return sendError(res, make(404, 'not_found', 'This download link is invalid or has expired.'));
      res.attachment(file.filename);
      res.setHeader('content-type', file.contentType);
      res.setHeader('content-length', String(file.size));
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('content-security-policy', "default-src 'none'; sandbox");
      res.setHeader('cache-control', 'private, no-store');
      if (Buffer.isBuffer(file.body)) return void res.end(req.method === 'HEAD' ? undefined : file.body);
      if (req.method === 'HEAD') {
        file.body.destroy();
        return void res.end();
      }
      file.body.on('error', (err) => {
        logger.error({ err: err.message }, 'received download failed mid-stream');
        res.destroy(err);
      });
      file.body.pipe(res);
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'received download failed');
      sendError(res, make(500, 'application_error', 'The download failed.'));
    }
  });
}
