import type { NextFunction, Request, Response } from 'express';
import { redactBody, sourceFromUserAgent } from '../../core/request-logs/index.js';
import { newId } from '../../core/ids.js';
import type { ApiDeps } from '../deps.js';
import { contextOf } from '../context.js';

/** Records every authenticated request once its answer is sent (batched by the writer). */
export function requestLog(deps: ApiDeps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const createdAt = deps.clock.now().toISOString();
    res.once('finish', () => {
      const ctx = contextOf(res);
      if (!ctx.principal || !ctx.operation) return;
      const path = req.originalUrl.split('?')[0]!;
      const userAgent = req.get('user-agent') ?? null;
      deps.logWriter.add({
        id: newId(),
        team_id: ctx.principal.teamId,
        api_key_id: ctx.principal.apiKeyId,
        created_at: createdAt,
        method: req.method,
        endpoint: ctx.operation.template,
        path,
        response_status: res.statusCode,
        user_agent: userAgent,
        source: sourceFromUserAgent(userAgent ?? undefined),
        request_id: ctx.requestId,
        latency_ms: Math.round(performance.now() - ctx.startedAt),
        email_id: ctx.emailId ?? null,
        request_body: redactBody(ctx.operation.template, req.body),
        response_body: redactBody(ctx.operation.template, ctx.responseBody, ctx.responseText),
      });
    });
    next();
  };
}
