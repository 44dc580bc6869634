import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ContactListItem, ContactView, SubscriptionStatus } from '../../core/contacts/index.js';
import { consentContextOf, principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

/** Property values keyed by property key; `null` removes a key. */
interface PropertyValuesBody {
  [key: string]: string | number | boolean | null;
}

interface TopicChoiceBody {
  /** A topic id. */
  id: string;
  subscription: 'opt_in' | 'opt_out';
}

interface SegmentRefBody {
  id: string;
}

interface CreateContactBody {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean;
  subscription_status?: SubscriptionStatus;
  properties?: PropertyValuesBody;
  segments?: SegmentRefBody[];
  topics?: TopicChoiceBody[];
}

/**
 * Only what is sent is touched. `email` must not belong to another contact; `subscription_status`
 * `never_subscribed` only for a contact that already is; `properties` merge key by key.
 */
interface UpdateContactBody {
  email?: string;
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean;
  subscription_status?: SubscriptionStatus;
  properties?: PropertyValuesBody;
}

/** No `has_more` (spec): walk with `after` using the last item's id; an empty page is the end. */
interface ContactList {
  object: 'list';
  data: ContactListItem[];
}

interface ContactTopic {
  id: string;
  name: string;
  description: string | null;
  /** The contact's own choice, else the topic's default. */
  subscription: 'opt_in' | 'opt_out';
}

type ContactRef = { object: 'contact'; id: string };

@Route('contacts')
@Tags('contacts')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class ContactsController extends SvcController {
  /**
   * Creates a contact; an address that exists is updated instead and keeps its id (a repeat never lifts an opt-out).
   * @summary Create a contact
   */
  @Post()
  @OperationId('createContact')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateContactBody): Promise<ContactRef> {
    const result = await this.deps.audience.contacts.create(principalOf(req).teamId, body, consentContextOf(req));
    this.setStatus(201);
    return result;
  }

  /**
   * The team's contacts, newest first, without properties.
   * @summary List contacts
   */
  @Get()
  @OperationId('listContacts')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async list(
    @Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string, @Query() segment_id?: string,
  ): Promise<ContactList> {
    return this.deps.audience.contacts.list(principalOf(req).teamId, { limit, after, before, segment_id });
  }

  /**
   * By id or by address (case-insensitive), with its properties.
   * @summary Retrieve a contact
   */
  @Get('{contact}')
  @OperationId('getContact')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async get(@Request() req: ExRequest, @Path() contact: string): Promise<ContactView> {
    return this.deps.audience.contacts.get(principalOf(req).teamId, contact);
  }

  /**
   * Changes only the fields sent; properties are merged key by key.
   * @summary Update a contact
   */
  @Patch('{contact}')
  @OperationId('updateContact')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  public async update(@Request() req: ExRequest, @Path() contact: string, @Body() body: UpdateContactBody): Promise<ContactRef> {
    return this.deps.audience.contacts.update(principalOf(req).teamId, contact, body, consentContextOf(req));
  }

  /**
   * Erasure: the contact's personal data goes; its consent records stay under a hash of the address.
   * @summary Delete a contact
   */
  @Delete('{contact}')
  @OperationId('removeContact')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  public async remove(@Request() req: ExRequest, @Path() contact: string): Promise<ContactRef & { contact: string; deleted: true }> {
    return this.deps.audience.contacts.remove(principalOf(req).teamId, contact, consentContextOf(req));
  }

  /**
   * Every live topic with the contact's subscription: its own choice, else the topic's default.
   * @summary List a contact's topics
   */
  @Get('{contact}/topics')
  @OperationId('listContactTopics')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async listTopics(
    @Request() req: ExRequest, @Path() contact: string, @Query() limit?: string, @Query() after?: string, @Query() before?: string,
  ): Promise<{ object: 'list'; has_more: boolean; data: ContactTopic[] }> {
    return this.deps.audience.contacts.listTopics(principalOf(req).teamId, contact, { limit, after, before });
  }

  /**
   * Records the contact's choices (a bare array); no contact.updated webhook for a topic change.
   * @summary Update a contact's topics
   */
  @Patch('{contact}/topics')
  @OperationId('updateContactTopics')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  public async updateTopics(@Request() req: ExRequest, @Path() contact: string, @Body() body: TopicChoiceBody[]): Promise<{ id: string }> {
    return this.deps.audience.contacts.updateTopics(principalOf(req).teamId, contact, body, consentContextOf(req));
  }
}
