import { Body, Delete, Extension, Get, Patch, Path, Post, Query, Request, Route, SuccessResponse, Tags } from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import type { AttemptView, MessageView, WebhookListItem, WebhookView } from '../../core/webhooks/index.js';
import { principalOf } from '../context.js';
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
type MessageItem = Omit<MessageView, 'object' | 'payload'>;

// Routes of the conventions page, plus the paths the resend SDK calls for the same operations
// (`signing-secret/rotate`, `events[/{id}[/attempts|/replay]]`; its "event" is our message).
@Route('webhooks')
@Tags('webhooks')
export class WebhooksController extends SvcController {
  /** Creates an endpoint; the answer carries its signing secret. */
  @Post()
  @SuccessResponse(201)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateWebhookBody): Promise<WebhookRef & { signing_secret: string }> {
    const result = await this.deps.webhooks.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  @Get()
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async list(@Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<WebhookListItem>> {
    return this.deps.webhooks.list(principalOf(req).teamId, { limit, after, before });
  }

  @Get('{id}')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async get(@Request() req: ExRequest, @Path() id: string): Promise<WebhookView> {
    return this.deps.webhooks.get(principalOf(req).teamId, id);
  }

  @Patch('{id}')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async update(@Request() req: ExRequest, @Path() id: string, @Body() body: UpdateWebhookBody): Promise<WebhookRef> {
    return this.deps.webhooks.update(principalOf(req).teamId, id, body);
  }

  @Delete('{id}')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async remove(@Request() req: ExRequest, @Path() id: string): Promise<WebhookRef & { deleted: true }> {
    return this.deps.webhooks.remove(principalOf(req).teamId, id);
  }

  /** New signing secret; the previous one keeps signing for 24 hours. */
  @Post('{id}/rotate-secret')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async rotateSecret(@Request() req: ExRequest, @Path() id: string): Promise<WebhookRef & { signing_secret: string }> {
    return this.deps.webhooks.rotateSecret(principalOf(req).teamId, id);
  }

  /** The SDK's path for rotate-secret. */
  @Post('{id}/signing-secret/rotate')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async rotateSigningSecret(@Request() req: ExRequest, @Path() id: string): Promise<WebhookRef & { signing_secret: string }> {
    return this.deps.webhooks.rotateSecret(principalOf(req).teamId, id);
  }

  /** Every delivery attempt to the endpoint, newest first. */
  @Get('{id}/attempts')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async attempts(@Request() req: ExRequest, @Path() id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<AttemptView>> {
    return this.deps.webhooks.listAttempts(principalOf(req).teamId, id, undefined, { limit, after, before });
  }

  @Get('{id}/messages')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async messages(@Request() req: ExRequest, @Path() id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<MessageItem>> {
    return this.deps.webhooks.listMessages(principalOf(req).teamId, id, { limit, after, before });
  }

  @Get('{id}/messages/{message_id}')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async message(@Request() req: ExRequest, @Path() id: string, @Path() message_id: string): Promise<MessageView> {
    return this.deps.webhooks.getMessage(principalOf(req).teamId, id, message_id);
  }

  @Get('{id}/messages/{message_id}/attempts')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async messageAttempts(
    @Request() req: ExRequest, @Path() id: string, @Path() message_id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<ListEnvelope<AttemptView>> {
    return this.deps.webhooks.listAttempts(principalOf(req).teamId, id, message_id, { limit, after, before });
  }

  /** Sends the message again with the same `wh-id`; 422 validation_error when the endpoint is disabled. */
  @Post('{id}/messages/{message_id}/replay')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async replay(@Request() req: ExRequest, @Path() id: string, @Path() message_id: string): Promise<{ object: 'webhook_event'; id: string }> {
    return this.deps.webhooks.replay(principalOf(req).teamId, id, message_id);
  }

  @Get('{id}/events')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async sdkEvents(@Request() req: ExRequest, @Path() id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<MessageItem>> {
    return this.deps.webhooks.listMessages(principalOf(req).teamId, id, { limit, after, before });
  }

  @Get('{id}/events/{message_id}')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async sdkEvent(@Request() req: ExRequest, @Path() id: string, @Path() message_id: string): Promise<MessageView> {
    return this.deps.webhooks.getMessage(principalOf(req).teamId, id, message_id);
  }

  @Get('{id}/events/{message_id}/attempts')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:read')
  public async sdkEventAttempts(
    @Request() req: ExRequest, @Path() id: string, @Path() message_id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<ListEnvelope<AttemptView>> {
    return this.deps.webhooks.listAttempts(principalOf(req).teamId, id, message_id, { limit, after, before });
  }

  @Post('{id}/events/{message_id}/replay')
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'webhooks:write')
  public async sdkReplay(@Request() req: ExRequest, @Path() id: string, @Path() message_id: string): Promise<{ object: 'webhook_event'; id: string }> {
    return this.deps.webhooks.replay(principalOf(req).teamId, id, message_id);
  }
}
