import type { Request, Response } from 'express';
import type { Principal, Permission } from '../core/api-keys/index.js';
import type { ConsentContext } from '../core/contacts/index.js';
import type { Operation } from './operations.js';

/** What the middleware learns about a request, kept on res.locals. */
export interface RequestContext {
  requestId: string;
  startedAt: number;
  operation?: Operation;
  /** The operation's path parameters as matched, still percent-encoded. */
  pathParams?: Record<string, string>;
  principal?: Principal;
  /** The JSON body sent back, for the request log. */
  responseBody?: unknown;
  /** Its JSON text as sent. */
  responseText?: string;
  /** Set by a route that created an email, for the request log. */
  emailId?: string;
}

export function contextOf(res: Response): RequestContext {
  return res.locals as RequestContext;
}

/** The calling key; only reachable on routes whose permission is not `none`. */
export function principalOf(req: Request): Principal {
  const principal = contextOf(req.res!).principal;
  if (!principal) throw new Error('route reached without a principal: its x-svc-permission is wrong');
  return principal;
}

/** A request's side of a consent record: the caller's address (as http_trust_proxy reads it) and user agent. */
export const consentContextOf = (req: Request): ConsentContext => ({ source: 'api', ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null });

export type { Permission };
