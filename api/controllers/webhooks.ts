import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route,
  SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import type { AttemptView, MessageItem, MessageView, WebhookListItem, WebhookView } from '../../core/webhooks/index.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, messageLocked, notFound, rateLimited, unauthorized, unavailable,
  unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

interface CreateWebhookBody {
  endpoint: string;
  events: string[];
}

interface UpdateWebhookBody {
  endpoint?: string;
  events?: string[];
  status?: 'enabled' | 'disabled';
}

type WebhookRef = { object: 'webhook'; id: string };

// Routes of the conventions page, plus the paths the resend SDK calls for the same operations
// (`signing-secret/rotate`, `events[/{id}[/attempts|/replay]]`; its "event" is our message).
@Route('webhooks')
@Tags('webhooks')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class WebhooksController extends SvcController {
  /**
   * Creates an endpoint; the answer carries its signing secret.
   * @summary Create a webhook
   */
  @Post()
  @OperationId('createWebhook')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateWebhookBody): Promise<WebhookRef & { signing_secret: string }> {
    const result = await this.deps.sending.webhooks.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  /**
   * The team's webhook endpoints, newest first.
   * @summary List webhooks
   */
  @Get()
  @OperationId('listWebhooks')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async list(@Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<WebhookListItem>> {
    return this.deps.sending.webhooks.list(principalOf(req).teamId, { limit, after, before });
  }

  /**
   * One endpoint, with its current signing secret.
   * @summary Retrieve a webhook
   */
  @Get('{id}')
  @OperationId('getWebhook')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async get(@Request() req: ExRequest, @Path() id: string): Promise<WebhookView> {
    return this.deps.sending.webhooks.get(principalOf(req).teamId, id);
  }

  /**
   * Changes the endpoint's URL, events or status.
   * @summary Update a webhook
   */
  @Patch('{id}')
  @OperationId('updateWebhook')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async update(@Request() req: ExRequest, @Path() id: string, @Body() body: UpdateWebhookBody): Promise<WebhookRef> {
    return this.deps.sending.webhooks.update(principalOf(req).teamId, id, body);
  }

  /**
   * Deletes the endpoint; nothing more is delivered to it.
   * @summary Delete a webhook
   */
  @Delete('{id}')
  @OperationId('deleteWebhook')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async remove(@Request() req: ExRequest, @Path() id: string): Promise<WebhookRef & { deleted: true }> {
    return this.deps.sending.webhooks.remove(principalOf(req).teamId, id);
  }

  /**
   * New signing secret; the previous one keeps signing for 24 hours.
   * @summary Rotate a webhook's signing secret
   */
  @Post('{id}/rotate-secret')
  @OperationId('rotateWebhookSecret')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async rotateSecret(@Request() req: ExRequest, @Path() id: string): Promise<WebhookRef & { signing_secret: string }> {
    return this.deps.sending.webhooks.rotateSecret(principalOf(req).teamId, id);
  }

  /**
   * The SDK's path for rotate-secret.
   * @summary Rotate a webhook's signing secret (SDK path)
   */
  @Post('{id}/signing-secret/rotate')
  @OperationId('rotateWebhookSigningSecret')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async rotateSigningSecret(@Request() req: ExRequest, @Path() id: string): Promise<WebhookRef & { signing_secret: string }> {
    return this.deps.sending.webhooks.rotateSecret(principalOf(req).teamId, id);
  }

  /**
   * Every delivery attempt to the endpoint, newest first.
   * @summary List a webhook's delivery attempts
   */
  @Get('{id}/attempts')
  @OperationId('listWebhookAttempts')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async attempts(@Request() req: ExRequest, @Path() id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<AttemptView>> {
    return this.deps.sending.webhooks.listAttempts(principalOf(req).teamId, id, undefined, { limit, after, before });
  }

  /**
   * The messages (events) sent to the endpoint, newest first.
   * @summary List a webhook's messages
   */
  @Get('{id}/messages')
  @OperationId('listWebhookMessages')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async messages(@Request() req: ExRequest, @Path() id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<MessageItem>> {
    return this.deps.sending.webhooks.listMessages(principalOf(req).teamId, id, { limit, after, before });
  }

  /**
   * One message with its payload.
   * @summary Retrieve a webhook message
   */
  @Get('{id}/messages/{message_id}')
  @OperationId('getWebhookMessage')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async message(@Request() req: ExRequest, @Path() id: string, @Path() message_id: string): Promise<MessageView> {
    return this.deps.sending.webhooks.getMessage(principalOf(req).teamId, id, message_id);
  }

  /**
   * Every delivery attempt of one message, newest first.
   * @summary List a webhook message's attempts
   */
  @Get('{id}/messages/{message_id}/attempts')
  @OperationId('listWebhookMessageAttempts')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async messageAttempts(
    @Request() req: ExRequest, @Path() id: string, @Path() message_id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<ListEnvelope<AttemptView>> {
    return this.deps.sending.webhooks.listAttempts(principalOf(req).teamId, id, message_id, { limit, after, before });
  }

  /**
   * Sends the message again with the same `wh-id`; 422 validation_error when the endpoint is disabled.
   * @summary Replay a webhook message
   */
  @Post('{id}/messages/{message_id}/replay')
  @OperationId('replayWebhookMessage')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(409, messageLocked)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async replay(@Request() req: ExRequest, @Path() id: string, @Path() message_id: string): Promise<{ object: 'webhook_event'; id: string }> {
    return this.deps.sending.webhooks.replay(principalOf(req).teamId, id, message_id);
  }

  /**
   * The SDK's path for the messages list.
   * @summary List a webhook's events (SDK path)
   */
  @Get('{id}/events')
  @OperationId('listWebhookEvents')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async sdkEvents(@Request() req: ExRequest, @Path() id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<MessageItem>> {
    return this.deps.sending.webhooks.listMessages(principalOf(req).teamId, id, { limit, after, before });
  }

  /**
   * The SDK's path for one message.
   * @summary Retrieve a webhook event (SDK path)
   */
  @Get('{id}/events/{message_id}')
  @OperationId('getWebhookEvent')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async sdkEvent(@Request() req: ExRequest, @Path() id: string, @Path() message_id: string): Promise<MessageView> {
    return this.deps.sending.webhooks.getMessage(principalOf(req).teamId, id, message_id);
  }

  /**
   * The SDK's path for one message's attempts.
   * @summary List a webhook event's attempts (SDK path)
   */
  @Get('{id}/events/{message_id}/attempts')
  @OperationId('listWebhookEventAttempts')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async sdkEventAttempts(
    @Request() req: ExRequest, @Path() id: string, @Path() message_id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<ListEnvelope<AttemptView>> {
    return this.deps.sending.webhooks.listAttempts(principalOf(req).teamId, id, message_id, { limit, after, before });
  }

  /**
   * The SDK's path for replay: sends the message again with the same `wh-id`.
   * @summary Replay a webhook event (SDK path)
   */
  @Post('{id}/events/{message_id}/replay')
  @OperationId('replayWebhookEvent')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(409, messageLocked)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async sdkReplay(@Request() req: ExRequest, @Path() id: string, @Path() message_id: string): Promise<{ object: 'webhook_event'; id: string }> {
    return this.deps.sending.webhooks.replay(principalOf(req).teamId, id, message_id);
  }
}
