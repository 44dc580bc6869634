import { Extension, Get, Path, Query, Request, Route, Tags } from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import type { LogDetailView, LogView } from '../../core/request-logs/index.js';
import { principalOf } from '../context.js';
import { SvcController } from './base.js';

@Route('logs')
@Tags('logs')
export class LogsController extends SvcController {
  /** Every request made with the team's keys, newest first. */
  @Get()
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
    return this.deps.requestLogs.list(principalOf(req).teamId, {
      limit, after, before, status, source, exclude_source, search, user_agent, start_date, end_date,
    });
  }

  /** One request with the bodies kept for it (measurements only). */
  @Get('{id}')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'logs:read')
  public async get(@Request() req: ExRequest, @Path() id: string): Promise<LogDetailView> {
    return this.deps.requestLogs.get(principalOf(req).teamId, id);
  }
}
