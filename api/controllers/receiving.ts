import { Delete, Extension, Get, OperationId, Path, Query, Request, Response, Route, Tags } from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import type { ReceivedAttachmentView, ReceivedEmailView, ReceivedListItem } from '../../core/receiving/index.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

// Received mail: a resource of its own beside sent emails (separate ids; /emails/{id} never finds
// one of these and these routes never find a sent email).
@Route('emails/receiving')
@Tags('receiving')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class ReceivingController extends SvcController {
  /**
   * Received messages, newest first.
   * @summary List received emails
   */
  @Get()
  @OperationId('listReceivedEmails')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:read')
  public async list(
    @Request() req: ExRequest,
    @Query() limit?: string,
    @Query() after?: string,
    @Query() before?: string,
    @Query() search?: string,
    @Query() start_date?: string,
    @Query() end_date?: string,
  ): Promise<ListEnvelope<ReceivedListItem>> {
    return this.deps.inbox.receiving.list(principalOf(req).teamId, { limit, after, before, search, start_date, end_date });
  }

  /**
   * One received message; `raw.download_url` is a signed link to its source.
   * @summary Retrieve a received email
   */
  @Get('{email_id}')
  @OperationId('getReceivedEmail')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:read')
  public async get(@Request() req: ExRequest, @Path() email_id: string, @Query() html_format?: string): Promise<ReceivedEmailView> {
    return this.deps.inbox.receiving.get(principalOf(req).teamId, email_id, { html_format });
  }

  /**
   * Deletes the message, its attachments and its source.
   * @summary Delete a received email
   */
  @Delete('{email_id}')
  @OperationId('deleteReceivedEmail')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:write')
  public async remove(@Request() req: ExRequest, @Path() email_id: string): Promise<{ object: 'email'; id: string; deleted: true }> {
    return this.deps.inbox.receiving.delete(principalOf(req).teamId, email_id);
  }

  /**
   * The message's parts, each with a signed `download_url` valid 15 minutes.
   * @summary List a received email's attachments
   */
  @Get('{email_id}/attachments')
  @OperationId('listReceivedAttachments')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:read')
  public async attachments(
    @Request() req: ExRequest,
    @Path() email_id: string,
    @Query() limit?: string,
    @Query() after?: string,
    @Query() before?: string,
  ): Promise<ListEnvelope<ReceivedAttachmentView>> {
    return this.deps.inbox.receiving.listAttachments(principalOf(req).teamId, email_id, { limit, after, before });
  }

  /**
   * One part of the message, with a signed `download_url` valid 15 minutes.
   * @summary Retrieve a received attachment
   */
  @Get('{email_id}/attachments/{attachment_id}')
  @OperationId('getReceivedAttachment')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:read')
  public async attachment(@Request() req: ExRequest, @Path() email_id: string, @Path() attachment_id: string): Promise<ReceivedAttachmentView> {
    return this.deps.inbox.receiving.getAttachment(principalOf(req).teamId, email_id, attachment_id);
  }
}
