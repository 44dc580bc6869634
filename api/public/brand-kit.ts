import type { Request, RequestHandler, Response, Router } from 'express';
import { hostedUploadsPath, type BrandKitUploadsService } from '../../core/team/index.js';
import type { Logger } from '../../core/logger.js';
import { make } from '../errors.js';
import { sendError } from '../middleware/send-error.js';

// Brand kit images, outside the contract layer: mail clients and their image proxies fetch a
// logo with no key, so the URL is public and `limited` (the per-client bucket) goes first. An
// upload never changes (a new image is a new id), so it may be cached for good. The headers keep
// even an SVG opened on its own inert: no sniffing into another type, and a CSP that loads
// nothing, runs nothing (sandbox: no scripts, no same origin) and allows only inline styles.

export const hostedImageHeaders = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'public, max-age=31536000, immutable',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
};

export function brandKitRoutes(router: Router, limited: RequestHandler, uploads: BrandKitUploadsService, logger: Logger): void {
  router.get(`${hostedUploadsPath}:file`, limited, async (req: Request<{ file: string }>, res: Response) => {
    res.setHeader('x-content-type-options', 'nosniff');
    try {
      const image = await uploads.open(req.params.file);
      if (!image) return sendError(res, make(404, 'not_found', 'No such image.'));
      for (const [name, value] of Object.entries(hostedImageHeaders)) res.setHeader(name, value);
      res.setHeader('content-type', image.contentType);
      res.setHeader('content-length', image.content.length);
      res.end(req.method === 'HEAD' ? undefined : image.content);
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'brand kit image failed');
      sendError(res, make(500, 'application_error', 'The image could not be served.'));
    }
  });
}
