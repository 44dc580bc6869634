import {
  Body, Delete, Extension, Get, OperationId, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import type { SuppressionOrigin, SuppressionView } from '../../core/suppressions/index.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

interface AddSuppressionBody {
  email: string;
}

interface BatchAddSuppressionsBody {
  emails: string[];
}

interface BatchRemoveSuppressionsBody {
  emails?: string[];
  ids?: string[];
}

type SuppressionRef = { object: 'suppression'; id: string };

// Spelled out rather than `Omit<SuppressionView, 'object'>`: the document tsoa writes for a mapped
// type drops `| null` from its fields and leaves an unused helper schema behind.
/** A suppression as the list shows it. */
interface SuppressionListItem {
  id: string;
  email: string;
  origin: SuppressionOrigin;
  source_id: string | null;
  created_at: string;
}

@Route('suppressions')
@Tags('suppressions')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class SuppressionsController extends SvcController {
  /**
   * Adds an address by hand (origin `manual`).
   * @summary Add a suppression
   */
  @Post()
  @OperationId('addSuppression')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:write')
  public async add(@Request() req: ExRequest, @Body() body: AddSuppressionBody): Promise<SuppressionRef> {
    const result = await this.deps.audience.suppressions.add(principalOf(req).teamId, body.email);
    this.setStatus(201);
    return result;
  }

  /**
   * The team's suppressed addresses, newest first.
   * @summary List suppressions
   */
  @Get()
  @OperationId('listSuppressions')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:read')
  public async list(
    @Request() req: ExRequest,
    @Query() limit?: string,
    @Query() after?: string,
    @Query() before?: string,
    @Query() origin?: string,
    @Query() search?: string,
    @Query() start_date?: string,
    @Query() end_date?: string,
  ): Promise<ListEnvelope<SuppressionListItem>> {
    return this.deps.audience.suppressions.list(principalOf(req).teamId, { limit, after, before, origin, search, start_date, end_date });
  }

  /**
   * By id or address: retrieving by address answers whether one may send to that person.
   * @summary Retrieve a suppression
   */
  @Get('{suppression}')
  @OperationId('getSuppression')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:read')
  public async get(@Request() req: ExRequest, @Path() suppression: string): Promise<SuppressionView> {
    return this.deps.audience.suppressions.get(principalOf(req).teamId, suppression);
  }

  /**
   * Lifts the suppression (by id or address): sending to the address is allowed again.
   * @summary Remove a suppression
   */
  @Delete('{suppression}')
  @OperationId('removeSuppression')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:write')
  public async remove(@Request() req: ExRequest, @Path() suppression: string): Promise<SuppressionRef & { deleted: true }> {
    return this.deps.audience.suppressions.remove(principalOf(req).teamId, suppression);
  }

  /**
   * Adds several addresses at once (origin `manual`).
   * @summary Add suppressions in a batch
   */
  @Post('batch/add')
  @OperationId('addSuppressions')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:write')
  public async batchAdd(@Request() req: ExRequest, @Body() body: BatchAddSuppressionsBody): Promise<{ data: SuppressionRef[] }> {
    return this.deps.audience.suppressions.batchAdd(principalOf(req).teamId, body.emails);
  }

  /**
   * Lifts several suppressions at once, by address or id.
   * @summary Remove suppressions in a batch
   */
  @Post('batch/remove')
  @OperationId('removeSuppressions')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:write')
  public async batchRemove(
    @Request() req: ExRequest, @Body() body: BatchRemoveSuppressionsBody,
  ): Promise<{ data: { object: 'suppression'; id: string | null; deleted: boolean }[] }> {
    return this.deps.audience.suppressions.batchRemove(principalOf(req).teamId, body);
  }
}
