import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ContactListItem } from '../../core/contacts/index.js';
import type { ListEnvelope } from '../../core/pagination.js';
import type { SegmentListItem } from '../../core/segments/index.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

/**
 * A tree of groups over conditions, at most 3 groups deep and 20 conditions. A group is
 * `{ "all": [...] }`, `{ "any": [...] }` or `{ "not": ... }` (one item or a list); a condition is
 * `{ "field", "op", "value" }` or `{ "topic": "<topic id>", "subscription": "opt_in" | "opt_out" }`.
 * Fields: `email` (eq, neq, contains, in), `first_name` and `last_name` (eq, neq, contains, exists,
 * in), `unsubscribed` (eq), `created_at` (gt, gte, lt, lte), `properties.<key>` by the property's
 * type (strings as first_name; numbers eq, neq, gt, gte, lt, lte, in, exists; booleans eq).
 */
interface FilterBody {
  [key: string]: unknown;
}

interface CreateSegmentBody {
  /** At most 200 characters; unique among the team's live segments (ignoring case). */
  name: string;
  /** Omit or null: members are only those added by hand. Fixed at creation. */
  filter?: FilterBody | null;
}

interface UpdateSegmentBody {
  name?: string;
  /** Fixed at creation: accepted only when unchanged. */
  filter?: FilterBody | null;
  /** Accepted when equal to the path id. */
  id?: string;
}

interface Segment extends SegmentListItem {
  object: 'segment';
  /** null: members are only those added by hand. */
  filter: FilterBody | null;
}

type SegmentRef = { object: 'segment'; id: string };

/** No `has_more` (as the contact list): walk with `after` using the last item's id; an empty page is the end. */
interface SegmentContactList {
  object: 'list';
  data: ContactListItem[];
}

@Route('segments')
@Tags('segments')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class SegmentsController extends SvcController {
  /**
   * The filter is checked against the team's declared properties and live topics: each bad
   * condition is one `errors[]` entry (422 validation_error). A live segment with the same name is
   * 422 invalid_parameter.
   * @summary Create a segment
   */
  @Post()
  @OperationId('createSegment')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'segments:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateSegmentBody): Promise<SegmentRef> {
    const result = await this.deps.audience.segments.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  /**
   * The team's live segments, newest first, without their filters.
   * @summary List segments
   */
  @Get()
  @OperationId('listSegments')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'segments:read')
  public async list(@Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<SegmentListItem>> {
    return this.deps.audience.segments.list(principalOf(req).teamId, { limit, after, before });
  }

  /**
   * One live segment with its filter.
   * @summary Retrieve a segment
   */
  @Get('{segment_id}')
  @OperationId('getSegment')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'segments:read')
  public async get(@Request() req: ExRequest, @Path() segment_id: string): Promise<Segment> {
    return this.deps.audience.segments.get(principalOf(req).teamId, segment_id) as Promise<Segment>;
  }

  /**
   * Renames it. A filter is never changed: for a different audience, create a new segment.
   * @summary Update a segment
   */
  @Patch('{segment_id}')
  @OperationId('updateSegment')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'segments:write')
  public async update(@Request() req: ExRequest, @Path() segment_id: string, @Body() body: UpdateSegmentBody): Promise<SegmentRef> {
    return this.deps.audience.segments.update(principalOf(req).teamId, segment_id, body);
  }

  /**
   * The segment is gone for every read and its name is free again.
   * @summary Delete a segment
   */
  @Delete('{segment_id}')
  @OperationId('removeSegment')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'segments:write')
  public async remove(@Request() req: ExRequest, @Path() segment_id: string): Promise<SegmentRef & { deleted: true }> {
    return this.deps.audience.segments.remove(principalOf(req).teamId, segment_id);
  }

  /**
   * The segment's members now — added by hand or matching the filter —, newest first: the same
   * list as `GET /contacts?segment_id=`.
   * @summary List a segment's contacts
   */
  @Get('{segment_id}/contacts')
  @OperationId('listSegmentContacts')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async contacts(
    @Request() req: ExRequest, @Path() segment_id: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<SegmentContactList> {
    return this.deps.audience.contacts.list(principalOf(req).teamId, { limit, after, before, segment_id });
  }
}

/** A contact's segment memberships (the SDK's `contacts.segments`). */
@Route('contacts')
@Tags('segments')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class ContactSegmentsController extends SvcController {
  /**
   * The live segments the contact is in now, by hand or by filter, newest first.
   * @summary List a contact's segments
   */
  @Get('{contact}/segments')
  @OperationId('listContactSegments')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async list(
    @Request() req: ExRequest, @Path() contact: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<ListEnvelope<SegmentListItem>> {
    return this.deps.audience.segments.listForContact(principalOf(req).teamId, contact, { limit, after, before });
  }

  /**
   * Adds the contact to the segment by hand; adding it again changes nothing.
   * @summary Add a contact to a segment
   */
  @Post('{contact}/segments/{segment_id}')
  @OperationId('addContactSegment')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  public async add(@Request() req: ExRequest, @Path() contact: string, @Path() segment_id: string): Promise<{ id: string }> {
    return this.deps.audience.segments.addContact(principalOf(req).teamId, contact, segment_id);
  }

  /**
   * Takes back an addition by hand (404 when there was none); a contact matching the filter stays in.
   * @summary Remove a contact from a segment
   */
  @Delete('{contact}/segments/{segment_id}')
  @OperationId('removeContactSegment')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  public async remove(@Request() req: ExRequest, @Path() contact: string, @Path() segment_id: string): Promise<{ id: string; deleted: true }> {
    return this.deps.audience.segments.removeContact(principalOf(req).teamId, contact, segment_id);
  }
}
