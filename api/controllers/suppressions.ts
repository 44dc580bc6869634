import { Body, Delete, Extension, Get, Path, Post, Query, Request, Route, SuccessResponse, Tags } from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import type { SuppressionView } from '../../core/suppressions/index.js';
import { principalOf } from '../context.js';
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

@Route('suppressions')
@Tags('suppressions')
export class SuppressionsController extends SvcController {
  /** Adds an address by hand (origin `manual`). */
  @Post()
  @SuccessResponse(201)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:write')
  public async add(@Request() req: ExRequest, @Body() body: AddSuppressionBody): Promise<SuppressionRef> {
    const result = await this.deps.suppressions.add(principalOf(req).teamId, body.email);
    this.setStatus(201);
    return result;
  }

  @Get()
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
  ): Promise<ListEnvelope<Omit<SuppressionView, 'object'>>> {
    return this.deps.suppressions.list(principalOf(req).teamId, { limit, after, before, origin, search, start_date, end_date });
  }

  /** By id or address: retrieving by address answers whether one may send to that person. */
  @Get('{suppression}')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:read')
  public async get(@Request() req: ExRequest, @Path() suppression: string): Promise<SuppressionView> {
    return this.deps.suppressions.get(principalOf(req).teamId, suppression);
  }

  /** Lifts the suppression (by id or address): sending to the address is allowed again. */
  @Delete('{suppression}')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:write')
  public async remove(@Request() req: ExRequest, @Path() suppression: string): Promise<SuppressionRef & { deleted: true }> {
    return this.deps.suppressions.remove(principalOf(req).teamId, suppression);
  }

  @Post('batch/add')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:write')
  public async batchAdd(@Request() req: ExRequest, @Body() body: BatchAddSuppressionsBody): Promise<{ data: SuppressionRef[] }> {
    return this.deps.suppressions.batchAdd(principalOf(req).teamId, body.emails);
  }

  @Post('batch/remove')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'suppressions:write')
  public async batchRemove(
    @Request() req: ExRequest, @Body() body: BatchRemoveSuppressionsBody,
  ): Promise<{ data: { object: 'suppression'; id: string | null; deleted: boolean }[] }> {
    return this.deps.suppressions.batchRemove(principalOf(req).teamId, body);
  }
}
