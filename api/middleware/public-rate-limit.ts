import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { clientBucket, type RateLimiter } from '../../core/rate-limit.js';
import { make } from '../errors.js';
import { sendError } from './send-error.js';
import { setRateHeaders } from './rate-headers.js';

/**
 * The token bucket of the public routes (signed downloads, share pages, and every public route
 * to come: each mounts this first). They carry no key, so the bucket is the client's address:
 * req.ip, which follows X-Forwarded-For only when http_trust_proxy is on (express's `trust
 * proxy`, set once for the whole app). Fails open like the team bucket.
 */
export function publicRateLimit(take: RateLimiter): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const decision = await take(clientBucket(req.ip ?? req.socket.remoteAddress));
    // Every answer carries the bucket it spent from (the spec's headers on every response).
    setRateHeaders(res, decision);
    if (decision.allowed) return next();
    sendError(res, make(429, 'rate_limit_exceeded', `Too many requests from this address. Retry after ${decision.retryAfterSeconds} s.`, {}, {
      'retry-after': String(decision.retryAfterSeconds),
    }));
  };
}
