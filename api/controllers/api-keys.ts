import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route,
  SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ApiKeyView, InboxAccess, KeyPermission } from '../../core/api-keys/index.js';
import type { ListEnvelope } from '../../core/pagination.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, keyForbidden, notFound, rateLimited, unauthorized, unavailable,
  unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

interface CreateApiKeyBody {
  name: string;
  permission?: KeyPermission;
  domain_id?: string | null;
  inbox_access?: InboxAccess;
  inbox_channel_ids?: string[] | null;
}

interface RenameApiKeyBody {
  name: string;
  /** Accepted when equal to the path id (SDKs send it). */
  id?: string;
}

@Route('api-keys')
@Tags('api-keys')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class ApiKeysController extends SvcController {
  /**
   * Creates a key; the token is shown in this answer only.
   * @summary Create an API key
   */
  @Post()
  @OperationId('createApiKey')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(403, keyForbidden)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'api_keys:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateApiKeyBody): Promise<{ id: string; token: string }> {
    this.setStatus(201);
    return this.deps.foundation.apiKeys.create(principalOf(req).teamId, body, { kind: 'api_key' });
  }

  /**
   * The team's keys, newest first; never their tokens.
   * @summary List API keys
   */
  @Get()
  @OperationId('listApiKeys')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'api_keys:read')
  public async list(
    @Request() req: ExRequest,
    @Query() limit?: string,
    @Query() after?: string,
    @Query() before?: string,
    @Query() status?: string,
    @Query() search?: string,
    @Query() permission?: string,
    @Query() inbox_access?: string,
  ): Promise<ListEnvelope<ApiKeyView>> {
    return this.deps.foundation.apiKeys.list(principalOf(req).teamId, { limit, after, before, status, search, permission, inbox_access });
  }

  /**
   * Changes the key's name.
   * @summary Rename an API key
   */
  @Patch('{id}')
  @OperationId('renameApiKey')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'api_keys:write')
  public async rename(@Request() req: ExRequest, @Path() id: string, @Body() body: RenameApiKeyBody): Promise<{ object: 'api_key'; id: string }> {
    return this.deps.foundation.apiKeys.rename(principalOf(req).teamId, id, body.name, body.id);
  }

  /**
   * Revokes the key: refused from the next request on; the row is kept for audit.
   * @summary Revoke an API key
   */
  @Delete('{id}')
  @OperationId('revokeApiKey')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'api_keys:write')
  public async revoke(@Request() req: ExRequest, @Path() id: string): Promise<{ object: 'api_key'; id: string; deleted: true }> {
    return this.deps.foundation.apiKeys.revoke(principalOf(req).teamId, id);
  }
}
