import { Extension, Get, OperationId, Query, Request, Response, Route, Tags } from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { MetricsView } from '../../core/metrics/index.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import { forbidden, internal, rateLimited, unauthorized, unavailable, unprocessable } from '../openapi-responses.js';
import { SvcController } from './base.js';

// List parameters are typed string[]: tsoa passes one value as a one-item array, and a repeated
// parameter (`metrics=sent&metrics=opened`) as every value; core splits commas and validates.
@Route('emails/metrics')
@Tags('emails')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class MetricsController extends SvcController {
  /**
   * Sending and receiving figures over a window, from one-minute rollups of the events.
   * @param exclude_machine `true` leaves out opens and clicks flagged as a machine's (privacy proxies, link
   * scanners): opened and clicked less those, unique counts at each email's first other hit.
   * @summary Email metrics
   */
  @Get()
  @OperationId('getEmailMetrics')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:read')
  public async get(
    @Request() req: ExRequest,
    @Query() start_date?: string,
    @Query() end_date?: string,
    @Query() metrics?: string[],
    @Query() dimensions?: string[],
    @Query() granularity?: string,
    @Query() domain_id?: string[],
    @Query() email_id?: string[],
    @Query() broadcast_id?: string[],
    @Query() timezone?: string,
    @Query() exclude_machine?: string,
  ): Promise<MetricsView> {
    return this.deps.sending.metrics.get(principalOf(req).teamId, {
      start_date, end_date, metrics, dimensions, granularity, domain_id, email_id, broadcast_id, timezone, exclude_machine,
    });
  }
}
