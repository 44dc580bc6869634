import {
  Body, Delete, Extension, Get, Header, OperationId, Patch, Path, Post, Query, Request, Response, Route, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import { ServiceError } from '../../core/errors.js';
import type { Answer } from '../../core/idempotency.js';
import type { ListEnvelope } from '../../core/pagination.js';
import type { BatchAnswer, Caller } from '../../core/emails/index.js';
import type { EmailListItem, EmailView } from '../../core/emails/index.js';
import type { SentAttachmentView } from '../../core/emails/index.js';
import { parsePageQuery } from '../../core/pagination.js';
import { contextOf, principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, badSendRequest, emailLocked, forbidden, idempotencyConflict, internal, invalidSend,
  notFound, rateLimited, sendForbidden, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

interface BufferJsonBody {
  type: 'Buffer';
  data: number[];
}

interface AttachmentBody {
  /** Base64 text (or a Node Buffer as JSON). */
  content?: string | BufferJsonBody | null;
  filename?: string | null;
  /** An http(s) URL svc fetches the part from. */
  path?: string | null;
  content_type?: string | null;
  /** Makes the part inline, referenced as cid:<content_id>. */
  content_id?: string | null;
}

interface TagBody {
  name: string;
  value: string;
}

interface TemplateRefBody {
  id: string;
  variables?: { [key: string]: any };
}

interface SendEmailBody {
  from?: string;
  to?: string | string[];
  cc?: string | string[] | null;
  bcc?: string | string[] | null;
  reply_to?: string | string[] | null;
  subject?: string;
  html?: string | null;
  text?: string | null;
  headers?: { [name: string]: string } | null;
  tags?: TagBody[] | { [name: string]: string } | null;
  attachments?: AttachmentBody[] | null;
  /** ISO 8601, or a phrase such as "in 2 hours" or "tomorrow at 9am" (UTC). */
  scheduled_at?: string | null;
  template?: TemplateRefBody | null;
  topic_id?: string | null;
}

interface RescheduleBody {
  scheduled_at?: string;
  /** Accepted when equal to the path id (SDKs send it). */
  id?: string;
}

interface ShareBody {
  /** A duration such as `10m` or `1 day`; default and maximum 48 hours. */
  expires_in?: string | null;
}

type EmailRef = { object: 'email'; id: string };

const callerOf = (req: ExRequest): Caller => {
  const p = principalOf(req);
  return { teamId: p.teamId, apiKeyId: p.apiKeyId, domainId: p.domainId };
};

@Route('emails')
@Tags('emails')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class EmailsController extends SvcController {
  /**
   * Sends one email; 200 once it is durably recorded (not yet delivered).
   * @summary Send an email
   */
  @Post()
  @OperationId('sendEmail')
  @Response<ErrorBody>(400, badSendRequest)
  @Response<ErrorBody>(403, sendForbidden)
  @Response<ErrorBody>(409, idempotencyConflict)
  @Response<ErrorBody>(422, invalidSend)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'emails:send')
  public async send(
    @Request() req: ExRequest,
    @Body() body: SendEmailBody,
    @Header('idempotency-key') idempotencyKey?: string,
  ): Promise<{ id: string }> {
    const answer = await this.deps.sending.emails.send(callerOf(req), body, idempotencyKey);
    contextOf(req.res!).emailId = answer.body.id;
    return this.answer(answer);
  }

  /**
   * Up to 100 emails, one rate-limit token; `x-batch-validation: strict` (default) or `permissive`.
   * @summary Send a batch of emails
   */
  @Post('batch')
  @OperationId('sendEmailBatch')
  @Response<ErrorBody>(400, badSendRequest)
  @Response<ErrorBody>(403, sendForbidden)
  @Response<ErrorBody>(409, idempotencyConflict)
  @Response<ErrorBody>(422, invalidSend)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'emails:send')
  public async batch(
    @Request() req: ExRequest,
    @Body() body: SendEmailBody[],
    @Header('idempotency-key') idempotencyKey?: string,
    @Header('x-batch-validation') batchValidation?: string,
  ): Promise<BatchAnswer> {
    const mode = batchValidation?.toLowerCase() ?? 'strict';
    if (mode !== 'strict' && mode !== 'permissive') {
      throw new ServiceError(400, 'validation_error', 'The `x-batch-validation` header must be `strict` or `permissive`.', { errors: [{ path: 'x-batch-validation', message: 'strict or permissive' }] });
    }
    const answer = await this.deps.sending.emails.sendBatch(callerOf(req), body, mode, idempotencyKey);
    const first = answer.body.data[0];
    if (first) contextOf(req.res!).emailId = first.id;
    return this.answer(answer);
  }

  /**
   * Sent emails, newest first.
   * @summary List sent emails
   */
  @Get()
  @OperationId('listEmails')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:read')
  public async list(
    @Request() req: ExRequest,
    @Query() limit?: string,
    @Query() after?: string,
    @Query() before?: string,
    @Query() status?: string,
    @Query() api_key_id?: string,
    @Query() start_date?: string,
    @Query() end_date?: string,
    @Query() search?: string,
    @Query() tags?: string,
  ): Promise<ListEnvelope<EmailListItem>> {
    return this.deps.sending.emails.list(principalOf(req).teamId, { limit, after, before, status, api_key_id, start_date, end_date, search, tags });
  }

  /**
   * One sent email, with its last event.
   * @summary Retrieve an email
   */
  @Get('{email_id}')
  @OperationId('getEmail')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:read')
  public async get(@Request() req: ExRequest, @Path() email_id: string): Promise<EmailView> {
    return this.deps.sending.emails.get(principalOf(req).teamId, email_id);
  }

  /**
   * Reschedules an email that is still scheduled.
   * @summary Reschedule an email
   */
  @Patch('{email_id}')
  @OperationId('rescheduleEmail')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(409, emailLocked)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:write')
  public async reschedule(@Request() req: ExRequest, @Path() email_id: string, @Body() body: RescheduleBody): Promise<EmailRef> {
    if (body.id !== undefined && body.id.toLowerCase() !== email_id.toLowerCase()) {
      throw new ServiceError(400, 'validation_error', 'The body `id` must match the path.', { errors: [{ path: 'id', message: 'must match the path id' }] });
    }
    return this.deps.sending.emails.reschedule(principalOf(req).teamId, email_id, body.scheduled_at);
  }

  /**
   * Cancels a scheduled email before it is dispatched.
   * @summary Cancel a scheduled email
   */
  @Post('{email_id}/cancel')
  @OperationId('cancelEmail')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(409, emailLocked)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:write')
  public async cancel(@Request() req: ExRequest, @Path() email_id: string): Promise<EmailRef> {
    return this.deps.sending.emails.cancel(principalOf(req).teamId, email_id);
  }

  /**
   * A read-only page of the message, without sign-in; the secret URL is returned this once.
   * @summary Create a share link
   */
  @Post('{email_id}/share')
  @OperationId('shareEmail')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:write')
  public async share(@Request() req: ExRequest, @Path() email_id: string, @Body() body?: ShareBody): Promise<EmailRef & { url: string }> {
    return this.deps.sending.shares.create(principalOf(req).teamId, email_id, body?.expires_in ?? undefined);
  }

  /**
   * Revokes every share link of the email: they then answer 404 like unknown ones.
   * @summary Revoke the share links
   */
  @Delete('{email_id}/share')
  @OperationId('revokeEmailShares')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:write')
  public async revokeShares(@Request() req: ExRequest, @Path() email_id: string): Promise<EmailRef & { revoked: number }> {
    return this.deps.sending.shares.revoke(principalOf(req).teamId, email_id);
  }

  /**
   * The attachments as sent, each with a download link valid 15 minutes.
   * @summary List a sent email's attachments
   */
  @Get('{email_id}/attachments')
  @OperationId('listEmailAttachments')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:read')
  public async attachments(
    @Request() req: ExRequest, @Path() email_id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<ListEnvelope<SentAttachmentView>> {
    parsePageQuery({ limit, after, before });
    return this.deps.sending.shares.listAttachments(principalOf(req).teamId, email_id);
  }

  /**
   * One attachment as sent, with a download link valid 15 minutes.
   * @summary Retrieve a sent attachment
   */
  @Get('{email_id}/attachments/{attachment_id}')
  @OperationId('getEmailAttachment')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'emails:read')
  public async attachment(@Request() req: ExRequest, @Path() email_id: string, @Path() attachment_id: string): Promise<SentAttachmentView> {
    return this.deps.sending.shares.getAttachment(principalOf(req).teamId, email_id, attachment_id);
  }

  private answer<T>(answer: Answer<T>): T {
    this.setStatus(answer.status);
    if (answer.replayed) this.setHeader('idempotent-replayed', 'true');
    return answer.body;
  }
}
