import {
  Extension, FormField, Get, Middlewares, OperationId, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ContactImportFailure, ContactImportView } from '../../core/contact-imports/index.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import { contactImportUpload, receivedImportOf } from '../middleware/contact-import-upload.js';
import {
  forbidden, importRefused, importUploadRefused, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

interface ContactImportList {
  object: 'list';
  has_more: boolean;
  data: ContactImportView[];
}

/** The kept failed rows: the first thousand, by row number. */
interface ContactImportFailureList {
  object: 'list';
  has_more: boolean;
  data: ContactImportFailure[];
}

@Route('contacts/imports')
@Tags('contacts')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class ContactImportsController extends SvcController {
  /**
   * A multipart upload: `file` (a CSV with a header row, up to 50 MB; required) and the fields below. Rows are
   * processed in the background (poll the import for its counts); no contact.* webhook is sent per row.
   * @summary Import contacts from a CSV file
   * @param column_map JSON object: `email` (required), `first_name`, `last_name`, `unsubscribed` name CSV columns;
   * `properties` maps property keys to a column name or `{column, type}` (`string` default, `number`, `boolean`).
   * Without it, the header's own `email`, `first_name`, `last_name` and `unsubscribed` columns are used.
   * @param on_conflict `upsert` (update an existing contact) or `skip` (leave it alone; the default).
   * @param segments JSON array of `{id}`: segments the imported contacts join.
   * @param topics JSON array of `{id, subscription}` (`opt_in` or `opt_out`): choices recorded for the imported contacts.
   */
  @Post()
  @OperationId('createContactImport')
  @Middlewares(contactImportUpload)
  @SuccessResponse(201)
  @Response<ErrorBody>(400, importUploadRefused)
  @Response<ErrorBody>(422, importRefused)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  @Extension('x-svc-file-part', 'file')
  public async create(
    @Request() req: ExRequest, @FormField() column_map?: string, @FormField() on_conflict?: string, @FormField() segments?: string,
    @FormField() topics?: string,
  ): Promise<{ object: 'contact_import'; id: string }> {
    const principal = principalOf(req);
    const received = receivedImportOf(req.res!);
    received.claimed = true;
    const result = await this.deps.audience.contactImports.create(principal.teamId, received.upload, { column_map, on_conflict, segments, topics }, {
      apiKeyId: principal.apiKeyId, ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null, fileName: received.fileName,
    });
    this.setStatus(201);
    return result;
  }

  /**
   * The team's imports, newest first.
   * @summary List contact imports
   * @param status `queued`, `in_progress`, `completed` or `failed`.
   */
  @Get()
  @OperationId('listContactImports')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async list(
    @Request() req: ExRequest, @Query() status?: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<ContactImportList> {
    return this.deps.audience.contactImports.list(principalOf(req).teamId, { status, limit, after, before });
  }

  /**
   * One import with its status and counts.
   * @summary Retrieve a contact import
   */
  @Get('{id}')
  @OperationId('getContactImport')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async get(@Request() req: ExRequest, @Path() id: string): Promise<ContactImportView> {
    return this.deps.audience.contactImports.get(principalOf(req).teamId, id);
  }

  /**
   * The failed rows kept for the import (the first thousand), each with its row number (1 is the first row after
   * the header), the address it gave and the reason.
   * @summary List a contact import's failed rows
   */
  @Get('{id}/failures')
  @OperationId('listContactImportFailures')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async failures(@Request() req: ExRequest, @Path() id: string): Promise<ContactImportFailureList> {
    return this.deps.audience.contactImports.failures(principalOf(req).teamId, id);
  }
}
