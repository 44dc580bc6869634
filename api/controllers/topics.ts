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

interface CreateTopicBody {
  /** At most 50 characters; unique among the team's live topics (ignoring case). */
  name: string;
  /** What a contact with no choice of its own is treated as. Fixed at creation. */
  default_subscription: 'opt_in' | 'opt_out';
  /** At most 200 characters; shown on the preference page. */
  description?: string | null;
  /** `private` by default: on the preference page only for contacts already opted in. */
  visibility?: 'public' | 'private';
}

interface UpdateTopicBody {
  name?: string;
  description?: string | null;
  visibility?: 'public' | 'private';
  /** Fixed at creation: accepted only when unchanged. */
  default_subscription?: 'opt_in' | 'opt_out';
  /** Accepted when equal to the path id (the SDK sends it). */
  id?: string;
}

/** A topic as the list shows it. */
interface TopicItem {
  id: string;
  name: string;
  description: string | null;
  default_subscription: 'opt_in' | 'opt_out';
  visibility: 'public' | 'private';
  created_at: string;
}

interface Topic extends TopicItem {
  object: 'topic';
}

type TopicRef = { object: 'topic'; id: string };

@Route('topics')
@Tags('topics')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class TopicsController extends SvcController {
  /**
   * A live topic with the same name is refused (422 invalid_parameter).
   * @summary Create a topic
   */
  @Post()
  @OperationId('createTopic')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'topics:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateTopicBody): Promise<TopicRef> {
    const result = await this.deps.audience.topics.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  /**
   * The team's live topics, newest first.
   * @summary List topics
   */
  @Get()
  @OperationId('listTopics')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'topics:read')
  public async list(@Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<TopicItem>> {
    return this.deps.audience.topics.list(principalOf(req).teamId, { limit, after, before });
  }

  /**
   * One live topic.
   * @summary Retrieve a topic
   */
  @Get('{topic_id}')
  @OperationId('getTopic')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'topics:read')
  public async get(@Request() req: ExRequest, @Path() topic_id: string): Promise<Topic> {
    return this.deps.audience.topics.get(principalOf(req).teamId, topic_id);
  }

  /**
   * Renames it or changes its description or visibility; `default_subscription` cannot change.
   * @summary Update a topic
   */
  @Patch('{topic_id}')
  @OperationId('updateTopic')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'topics:write')
  public async update(@Request() req: ExRequest, @Path() topic_id: string, @Body() body: UpdateTopicBody): Promise<TopicRef> {
    return this.deps.audience.topics.update(principalOf(req).teamId, topic_id, body);
  }

  /**
   * The topic is gone for every read and its name is free again; contacts' choices stay recorded.
   * @summary Delete a topic
   */
  @Delete('{topic_id}')
  @OperationId('removeTopic')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'topics:write')
  public async remove(@Request() req: ExRequest, @Path() topic_id: string): Promise<TopicRef & { deleted: true }> {
    return this.deps.audience.topics.remove(principalOf(req).teamId, topic_id);
  }
}
