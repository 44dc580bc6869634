import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ServiceError } from '../../core/errors.js';
import type { ApiDeps } from '../deps.js';
import { contextOf } from '../context.js';
import { make } from '../errors.js';
import type { Match } from '../operations.js';
import { sendError } from './send-error.js';
import { setRateHeaders } from './rate-headers.js';

/**
 * Before any body is read: which operation is this (404/405 otherwise), does it carry a
 * User-Agent, who is calling, and may the team spend a rate-limit token.
 */
export function guard(deps: ApiDeps, match: (method: string, path: string) => Match): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const found = match(req.method, req.path);
    if (found.kind !== 'operation') await showTeamBucket(deps, req, res);
    if (found.kind === 'unknown') return sendError(res, make(404, 'not_found', 'The requested endpoint does not exist.'));
    if (found.kind === 'wrong_method') {
      res.setHeader('allow', found.allowed.join(', '));
      return sendError(res, make(405, 'method_not_allowed', `Method ${req.method} is not allowed on this path.`));
    }
    const ctx = contextOf(res);
    ctx.operation = found.operation;
    ctx.pathParams = found.pathParams;
    if (found.operation.permission === 'none') return next();
    try {
      requireUserAgent(req);
      ctx.principal = await deps.authenticate(req.get('authorization'), found.operation.permission, found.operation.scope);
      await spendToken(deps, res, ctx.principal.teamId, 1);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * The spec puts the rate headers on every response, a 404 for an unknown route included. Such a
 * request spends nothing, but when its key is good the headers show that team's bucket as it is
 * (a look that takes no token), not the full one every uncharged answer shows.
 */
async function showTeamBucket(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  if (!req.get('authorization')) return;
  const principal = await deps.authenticate(req.get('authorization'), 'sending_access', null).catch(() => undefined);
  if (principal) setRateHeaders(res, await deps.rateLimit(principal.teamId, 0));
}

function requireUserAgent(req: Request): void {
  if (!req.get('user-agent')) {
    throw new ServiceError(403, 'validation_error', 'Missing `User-Agent` header.', { code: 1010 });
  }
}

async function spendToken(deps: ApiDeps, res: Response, teamId: string, cost: number): Promise<void> {
  const decision = await deps.rateLimit(teamId, cost);
  setRateHeaders(res, decision);
  if (!decision.allowed) {
    throw new ServiceError(429, 'rate_limit_exceeded', `Too many requests. You can only make ${decision.limit} requests per second. Retry after ${decision.retryAfterSeconds} s.`, {
      headers: { 'retry-after': String(decision.retryAfterSeconds) },
    });
  }
}
