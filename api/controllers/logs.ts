import { Extension, Get, OperationId, Path, Query, Request, Response, Route, Tags } from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import type { LogDetailView, LogView } from '../../core/request-logs/index.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

@Route('logs')
@Tags('logs')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class LogsController extends SvcController {
  /**
   * Every request made with the team's keys, newest first.
   * @summary List request logs
   */
  @Get()
  @OperationId('listLogs')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'logs:read')
  public async list(
    @Request() req: ExRequest,
    @Query() limit?: string,
    @Query() after?: string,
    @Query() before?: string,
    @Query() status?: string,
    @Query() source?: string,
    @Query() exclude_source?: string,
    @Query() search?: string,
    @Query() user_agent?: string,
    @Query() start_date?: string,
    @Query() end_date?: string,
  ): Promise<ListEnvelope<LogView>> {
    return this.deps.foundation.requestLogs.list(principalOf(req).teamId, {
      limit, after, before, status, source, exclude_source, search, user_agent, start_date, end_date,
    });
  }

  /**
   * One request with the bodies kept for it (measurements only).
   * @summary Retrieve a request log
   */
  @Get('{id}')
  @OperationId('getLog')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'logs:read')
  public async get(@Request() req: ExRequest, @Path() id: string): Promise<LogDetailView> {
    return this.deps.foundation.requestLogs.get(principalOf(req).teamId, id);
  }
}
