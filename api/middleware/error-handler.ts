import type { ErrorRequestHandler } from 'express';
import type { ApiDeps } from '../deps.js';
import { contextOf } from '../context.js';
import { translateError } from '../errors.js';
import { sendError } from './send-error.js';
import { storageFailure } from '../../storage/files/index.js';

/** Last in the chain: every thrown or passed error leaves as the spec's error body. */
export function errorHandler(deps: ApiDeps): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) return next(err);
    const ctx = contextOf(res);
    const translated = translateError(err, ctx.requestId);
    const storage = storageFailure(err);
    if (storage) {
      // Expected while the disk is full; one line naming the cause, not a stack per request.
      deps.logger.warn({ requestId: ctx.requestId, route: ctx.operation?.template, storage, code: (err as { code?: string }).code }, 'request refused: storage unavailable');
    } else if (translated.status >= 500) {
      deps.logger.error({ err, requestId: ctx.requestId, route: ctx.operation?.template }, 'request failed');
    }
    sendError(res, translated);
  };
}
