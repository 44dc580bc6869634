import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { contextOf } from '../context.js';

/** Gives every request an id and a start time, and keeps the JSON body sent back for the log. */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const ctx = contextOf(res);
  ctx.requestId ??= randomUUID();
  ctx.startedAt ??= performance.now();
  res.setHeader('x-request-id', ctx.requestId);
  const sendJson = res.json.bind(res);
  res.json = (body: unknown) => {
    ctx.responseBody = body;
    if (body === undefined) return sendJson(body);
    // As express's res.json does with svc's settings (no replacer, spaces or escaping), keeping
    // the text so the request log need not serialise the body again.
    ctx.responseText = JSON.stringify(body);
    if (!res.get('Content-Type')) res.set('Content-Type', 'application/json; charset=utf-8');
    return res.send(ctx.responseText);
  };
  next();
}
