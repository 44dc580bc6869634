import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import { badRequest, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable } from '../openapi-responses.js';
import { SvcController } from './base.js';

interface CreateSavedBlockBody {
  /** 1-200 characters. */
  name: string;
  /** `block` (one block of a column) or `section` (a whole section: a header, a footer). */
  kind: 'block' | 'section';
  /** A block `{type, …}` or a section `{columns: [[block, …]], background_color?, show_when?, repeat?}`. */
  content: { [key: string]: any };
}

interface UpdateSavedBlockBody {
  name?: string;
  /** Accepted when equal to the saved block's own kind. */
  kind?: 'block' | 'section';
  /** New content: copied into every live template's published version and open draft using it. */
  content?: { [key: string]: any } | null;
  /** Accepted when equal to the path id. */
  id?: string;
}

interface SavedBlock {
  object: 'saved_block';
  id: string;
  name: string;
  kind: 'block' | 'section';
  content: { [key: string]: any };
  created_at: string;
  updated_at: string;
}

type SavedBlockRef = { object: 'saved_block'; id: string };

@Route('saved-blocks')
@Tags('templates')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class SavedBlocksController extends SvcController {
  /**
   * A reusable block or section; a template's layout names it by `saved_block_id`.
   * @summary Create a saved block
   */
  @Post()
  @OperationId('createSavedBlock')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'templates:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateSavedBlockBody): Promise<SavedBlockRef> {
    const result = await this.deps.content.savedBlocks.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  /**
   * The team's live saved blocks, newest first.
   * @summary List saved blocks
   */
  @Get()
  @OperationId('listSavedBlocks')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'templates:read')
  public async list(@Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<SavedBlock>> {
    return this.deps.content.savedBlocks.list(principalOf(req).teamId, { limit, after, before });
  }

  /**
   * @summary Retrieve a saved block
   */
  @Get('{saved_block_id}')
  @OperationId('getSavedBlock')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'templates:read')
  public async get(@Request() req: ExRequest, @Path() saved_block_id: string): Promise<SavedBlock> {
    return this.deps.content.savedBlocks.get(principalOf(req).teamId, saved_block_id);
  }

  /**
   * New content is copied into every live template's published version and open draft that uses
   * the block, each compiled again now; content a template cannot take refuses the edit (422).
   * @summary Update a saved block
   */
  @Patch('{saved_block_id}')
  @OperationId('updateSavedBlock')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'templates:write')
  public async update(@Request() req: ExRequest, @Path() saved_block_id: string, @Body() body: UpdateSavedBlockBody): Promise<SavedBlockRef> {
    return this.deps.content.savedBlocks.update(principalOf(req).teamId, saved_block_id, body);
  }

  /**
   * Templates keep the copy they hold.
   * @summary Delete a saved block
   */
  @Delete('{saved_block_id}')
  @OperationId('removeSavedBlock')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'templates:write')
  public async remove(@Request() req: ExRequest, @Path() saved_block_id: string): Promise<SavedBlockRef & { deleted: true }> {
    return this.deps.content.savedBlocks.remove(principalOf(req).teamId, saved_block_id);
  }
}
