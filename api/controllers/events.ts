import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

type SchemaMap = { [key: string]: string };

interface CreateEventBody {
  /** Lower-case letters, digits, `.`, `_`, `-`; starts with a letter; at most 100 characters; `svc:` is reserved. */
  name: string;
  /** Payload key to `string`, `number`, `boolean` or `date`; at most 50 keys. */
  schema?: { [key: string]: unknown } | null;
}

interface UpdateEventBody {
  /** Replaces the schema. */
  schema: { [key: string]: unknown } | null;
}

interface SendEventBody {
  /** A custom event's name or one of the eight `store:` events. */
  event: string;
  /** Exactly one of `contact_id` and `email` (a store event may give only `anonymous_id`). */
  contact_id?: string | null;
  email?: string | null;
  /** At most 16 KB of JSON, checked against the event's schema. */
  payload?: { [key: string]: unknown } | null;
  /** Store events only: the browser's anonymous ID cookie value. */
  anonymous_id?: string | null;
  /** Store events only: a repeat with the same key is the same event. */
  idempotency_key?: string | null;
  /** Store events only: ISO 8601, at most 5 minutes ahead and 90 days back (default now). */
  occurred_at?: string | null;
  /** Store events only: false records the event without starting flows. */
  start_flows?: boolean;
}

interface EventDefinition {
  id: string;
  name: string;
  schema: SchemaMap | null;
  created_at: string;
  updated_at: string | null;
}

interface EventDefinitionObject extends EventDefinition {
  object: 'event';
}

type EventRef = { object: 'event'; id: string };

@Route('events')
@Tags('events')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class EventsController extends SvcController {
  /**
   * A reserved, malformed or already-held name is 422 validation_error.
   * @summary Create a custom event
   */
  @Post()
  @OperationId('createEvent')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'events:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateEventBody): Promise<EventRef> {
    const result = await this.deps.campaigns.events.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  /**
   * Records an event for a contact and starts one run in each enabled automation it triggers
   * (202; the runs start on the next tick). No `Idempotency-Key`: two calls are two events.
   * @summary Send an event
   */
  @Post('send')
  @OperationId('sendEvent')
  @SuccessResponse(202)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'events:send')
  public async send(@Request() req: ExRequest, @Body() body: SendEventBody): Promise<{ object: 'event'; event: string }> {
    const result = await this.deps.campaigns.events.send(principalOf(req).teamId, body);
    this.setStatus(202);
    return result;
  }

  /**
   * The team's live definitions, newest first; `search` is a case-insensitive substring of the name.
   * @summary List custom events
   */
  @Get()
  @OperationId('listEvents')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'events:read')
  public async list(
    @Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string, @Query() search?: string,
  ): Promise<ListEnvelope<EventDefinition>> {
    return this.deps.campaigns.events.list(principalOf(req).teamId, { limit, after, before, search });
  }

  /**
   * By ID or by name.
   * @summary Retrieve a custom event
   */
  @Get('{identifier}')
  @OperationId('getEvent')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'events:read')
  public async get(@Request() req: ExRequest, @Path() identifier: string): Promise<EventDefinitionObject> {
    return this.deps.campaigns.events.get(principalOf(req).teamId, identifier);
  }

  /**
   * Replaces the schema.
   * @summary Update a custom event
   */
  @Patch('{identifier}')
  @OperationId('updateEvent')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'events:write')
  public async update(@Request() req: ExRequest, @Path() identifier: string, @Body() body: UpdateEventBody): Promise<EventRef> {
    return this.deps.campaigns.events.update(principalOf(req).teamId, identifier, body);
  }

  /**
   * Soft delete: the name is free again.
   * @summary Delete a custom event
   */
  @Delete('{identifier}')
  @OperationId('removeEvent')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'events:write')
  public async remove(@Request() req: ExRequest, @Path() identifier: string): Promise<EventRef & { deleted: true }> {
    return this.deps.campaigns.events.remove(principalOf(req).teamId, identifier);
  }
}
