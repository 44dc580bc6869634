import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import type { BroadcastListItem, BroadcastView, ChecklistView, ClickedLink, ContentChecksView, RecipientItem } from '../../core/broadcasts/index.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, broadcastForbidden, broadcastRefused, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

interface BroadcastFieldsBody {
  /** At most 200 characters; `Untitled` when none. */
  name?: string | null;
  /** The segment the broadcast goes to (checked when it is sent). */
  segment_id?: string | null;
  /** The older name of `segment_id`. */
  audience_id?: string | null;
  /** Only contacts whose effective subscription to this topic is `opt_in` receive it. */
  topic_id?: string | null;
  /** A published template whose content the broadcast sends where it has none of its own. */
  template_id?: string | null;
  from?: string | null;
  subject?: string | null;
  reply_to?: string | string[] | null;
  preview_text?: string | null;
  /** Merge variables `{{{KEY}}}` or `{{{KEY|default}}}`; HTML-escaped here. */
  html?: string | null;
  text?: string | null;
}

interface CreateBroadcastBody extends BroadcastFieldsBody {
  /** Send now (or at `scheduled_at`) instead of keeping a draft; the gate and checks run first. */
  send?: boolean | null;
  /** Only with `send: true`: an ISO 8601 instant or a phrase such as "in 2 hours". */
  scheduled_at?: string | null;
  /** Send even though a content check fails. */
  acknowledge_checks?: boolean | null;
}

interface SendBroadcastBody {
  scheduled_at?: string | null;
  acknowledge_checks?: boolean | null;
}

type BroadcastRef = { object: 'broadcast'; id: string };
type IdOnly = { id: string };

interface BroadcastRecipientItem {
  id: string;
  contact_id: string | null;
  email: string;
  email_id: string | null;
  reason?: string | null;
  bounce_type?: 'permanent' | 'transient' | 'undetermined';
  /** Type `opened`: the recipient's opens; type `clicked`: its clicks. */
  count?: number;
  /** Type `clicked`: each link the recipient clicked, with its clicks. */
  clicked_links?: { url: string; clicks: number }[];
}

@Route('broadcasts')
@Tags('broadcasts')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class BroadcastsController extends SvcController {
  /**
   * A draft; with `send: true` it is sent at once (or scheduled), and nothing is created when the
   * send gate or the content checks refuse.
   * @summary Create a broadcast
   */
  @Post()
  @OperationId('createBroadcast')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(403, broadcastForbidden)
  @Response<ErrorBody>(422, broadcastRefused)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateBroadcastBody): Promise<IdOnly> {
    const result = await this.deps.campaigns.broadcasts.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  /**
   * The team's broadcasts, newest first.
   * @summary List broadcasts
   */
  @Get()
  @OperationId('listBroadcasts')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:read')
  public async list(@Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<BroadcastListItem>> {
    return this.deps.campaigns.broadcasts.list(principalOf(req).teamId, { limit, after, before });
  }

  /**
   * One broadcast with its content and status.
   * @summary Retrieve a broadcast
   */
  @Get('{broadcast_id}')
  @OperationId('getBroadcast')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:read')
  public async get(@Request() req: ExRequest, @Path() broadcast_id: string): Promise<BroadcastView> {
    return this.deps.campaigns.broadcasts.get(principalOf(req).teamId, broadcast_id);
  }

  /**
   * Changes the fields sent; only a draft can be updated.
   * @summary Update a broadcast
   */
  @Patch('{broadcast_id}')
  @OperationId('updateBroadcast')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, broadcastRefused)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:write')
  public async update(@Request() req: ExRequest, @Path() broadcast_id: string, @Body() body: BroadcastFieldsBody): Promise<IdOnly> {
    return this.deps.campaigns.broadcasts.update(principalOf(req).teamId, broadcast_id, body);
  }

  /**
   * Only a draft can be deleted.
   * @summary Delete a broadcast
   */
  @Delete('{broadcast_id}')
  @OperationId('removeBroadcast')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, broadcastRefused)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:write')
  public async remove(@Request() req: ExRequest, @Path() broadcast_id: string): Promise<BroadcastRef & { deleted: true }> {
    return this.deps.campaigns.broadcasts.remove(principalOf(req).teamId, broadcast_id);
  }

  /**
   * Runs the send gate, then the content checks, then queues the fan-out (or schedules it).
   * @summary Send or schedule a broadcast
   */
  @Post('{broadcast_id}/send')
  @OperationId('sendBroadcast')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(403, broadcastForbidden)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, broadcastRefused)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:write')
  public async send(@Request() req: ExRequest, @Path() broadcast_id: string, @Body() body?: SendBroadcastBody): Promise<IdOnly> {
    return this.deps.campaigns.broadcasts.send(principalOf(req).teamId, broadcast_id, body ?? {});
  }

  /**
   * From scheduled or queued it never starts; while sending it stops at the next page of recipients.
   * @summary Cancel a broadcast
   */
  @Post('{broadcast_id}/cancel')
  @OperationId('cancelBroadcast')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, broadcastRefused)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:write')
  public async cancel(@Request() req: ExRequest, @Path() broadcast_id: string): Promise<BroadcastRef> {
    return this.deps.campaigns.broadcasts.cancel(principalOf(req).teamId, broadcast_id);
  }

  /**
   * A new draft with the same content and audience.
   * @summary Duplicate a broadcast
   */
  @Post('{broadcast_id}/duplicate')
  @OperationId('duplicateBroadcast')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:write')
  public async duplicate(@Request() req: ExRequest, @Path() broadcast_id: string): Promise<BroadcastRef> {
    return this.deps.campaigns.broadcasts.duplicate(principalOf(req).teamId, broadcast_id);
  }

  /**
   * Every send-gate check with its outcome; nothing is sent.
   * @summary Run a broadcast's send gate
   */
  @Get('{broadcast_id}/checklist')
  @OperationId('getBroadcastChecklist')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:read')
  public async checklist(@Request() req: ExRequest, @Path() broadcast_id: string): Promise<ChecklistView> {
    return this.deps.campaigns.broadcasts.checklist(principalOf(req).teamId, broadcast_id);
  }

  /**
   * Every content check (pass, warn or fail); nothing is sent and no link is visited.
   * @summary Run a broadcast's content checks
   */
  @Post('{broadcast_id}/checks')
  @OperationId('runBroadcastChecks')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:read')
  public async checks(@Request() req: ExRequest, @Path() broadcast_id: string): Promise<ContentChecksView> {
    return this.deps.campaigns.broadcasts.checks(principalOf(req).teamId, broadcast_id);
  }

  /**
   * Recipients by `type`: sent, delivered, bounced (with `bounce_type`), suppressed (members the
   * broadcast excluded, with their `reason`), opened (with `count`), clicked (with `count` and
   * `clicked_links`), complained, and unsubscribed (through this broadcast's unsubscribe or
   * preference link). Machine opens and clicks count unless `exclude_machine=true`.
   * @summary List a broadcast's recipients
   */
  @Get('{broadcast_id}/recipients')
  @OperationId('listBroadcastRecipients')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:read')
  public async recipients(
    @Request() req: ExRequest, @Path() broadcast_id: string, @Query() type?: string, @Query() email?: string, @Query() bounce_type?: string,
    @Query() exclude_machine?: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<ListEnvelope<BroadcastRecipientItem>> {
    const page: ListEnvelope<RecipientItem> = await this.deps.campaigns.broadcasts.recipients(principalOf(req).teamId, broadcast_id, { type, email, bounce_type, exclude_machine, limit, after, before });
    return page;
  }

  /**
   * Clicks per link of the broadcast's emails: `clicks` every click, `unique_clicks` the recipients
   * who clicked it; machine clicks (link scanners) count unless `exclude_machine=true`. Newest first
   * clicked first.
   * @summary List a broadcast's clicked links
   */
  @Get('{broadcast_id}/clicked-links')
  @OperationId('listBroadcastClickedLinks')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'broadcasts:read')
  public async clickedLinks(
    @Request() req: ExRequest, @Path() broadcast_id: string, @Query() exclude_machine?: string,
    @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<ListEnvelope<ClickedLink>> {
    return this.deps.campaigns.broadcasts.clickedLinks(principalOf(req).teamId, broadcast_id, { exclude_machine, limit, after, before });
  }
}
