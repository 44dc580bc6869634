import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { PropertyType } from '../../core/contacts/index.js';
import type { ListEnvelope } from '../../core/pagination.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

interface CreateContactPropertyBody {
  /** Letters, digits and underscores (not starting with a digit), at most 50; unique per team, ignoring case. */
  key: string;
  type: PropertyType;
  /** Must suit the type. */
  fallback_value?: string | number | boolean | null;
}

interface UpdateContactPropertyBody {
  fallback_value?: string | number | boolean | null;
  /** Accepted when equal to the path id. */
  id?: string;
}

/** A declared property as the list shows it. */
interface ContactPropertyItem {
  id: string;
  key: string;
  type: PropertyType;
  fallback_value: string | number | boolean | null;
  created_at: string;
}

interface ContactProperty extends ContactPropertyItem {
  object: 'contact_property';
}

type PropertyRef = { object: 'contact_property'; id: string };

@Route('contact-properties')
@Tags('contacts')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class ContactPropertiesController extends SvcController {
  /**
   * Declares a property: a key, a type and an optional fallback for merge variables.
   * @summary Create a contact property
   */
  @Post()
  @OperationId('createContactProperty')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateContactPropertyBody): Promise<PropertyRef> {
    const result = await this.deps.audience.contactProperties.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  /**
   * The team's declared properties, newest first.
   * @summary List contact properties
   */
  @Get()
  @OperationId('listContactProperties')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async list(@Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<ContactPropertyItem>> {
    return this.deps.audience.contactProperties.list(principalOf(req).teamId, { limit, after, before });
  }

  /**
   * By id or by key.
   * @summary Retrieve a contact property
   */
  @Get('{property}')
  @OperationId('getContactProperty')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'contacts:read')
  public async get(@Request() req: ExRequest, @Path() property: string): Promise<ContactProperty> {
    return this.deps.audience.contactProperties.get(principalOf(req).teamId, property);
  }

  /**
   * Changes the fallback value; the key and type are fixed.
   * @summary Update a contact property
   */
  @Patch('{property}')
  @OperationId('updateContactProperty')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  public async update(@Request() req: ExRequest, @Path() property: string, @Body() body: UpdateContactPropertyBody): Promise<PropertyRef> {
    return this.deps.audience.contactProperties.update(principalOf(req).teamId, property, body);
  }

  /**
   * Removes the property and every contact's value for it.
   * @summary Delete a contact property
   */
  @Delete('{property}')
  @OperationId('removeContactProperty')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'contacts:write')
  public async remove(@Request() req: ExRequest, @Path() property: string): Promise<PropertyRef & { deleted: true }> {
    return this.deps.audience.contactProperties.remove(principalOf(req).teamId, property);
  }
}
