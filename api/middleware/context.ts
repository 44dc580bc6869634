import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { contextOf } from '../context.js';

const expressJson = express.response.json;

/** Gives every request an id and a start time, and keeps the JSON body sent back for the log. */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const ctx = contextOf(res);
  ctx.requestId ??= randomUUID();
  ctx.startedAt ??= performance.now();
  res.setHeader('x-request-id', ctx.requestId);
  res.json = sendJson;
  next();
}

/**
 * res.json for every svc answer: the text is kept so the request log need not serialise the body
 * again, and it is sent as express's res.send would with svc's settings (no ETag, so never a 304)
 * without its per-call content-type parsing and freshness checks.
 */
function sendJson(this: Response, body: unknown): Response {
  const ctx = contextOf(this);
  ctx.responseBody = body;
  if (body === undefined || this.statusCode === 204 || this.statusCode === 304) return expressJson.call(this, body);
  const text = JSON.stringify(body);
  ctx.responseText = text;
  if (!this.hasHeader('content-type')) this.setHeader('content-type', 'application/json; charset=utf-8');
  this.setHeader('content-length', Buffer.byteLength(text));
  this.end(this.req.method === 'HEAD' ? undefined : text);
  return this;
}
