import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, badSendRequest, forbidden, internal, invalidSend, notFound, rateLimited, sendForbidden, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

type VariableType = 'string' | 'number' | 'boolean' | 'object' | 'list';

interface VariableBody {
  /** ASCII letters, digits and underscores; used as `{{key}}`. */
  key: string;
  type: VariableType;
  /** What an omitted value renders as (null: none); of the variable's type. */
  fallback_value?: any;
}

interface BrandOverridesBody {
  logo_url?: string | null;
  primary_color?: string | null;
  accent_color?: string | null;
  font?: string | null;
  button_style?: string | null;
  company_name?: string | null;
  address?: string | null;
  footer_text?: string | null;
}

interface TemplateContentBody {
  from?: string | null;
  subject?: string | null;
  reply_to?: string | string[] | null;
  /** The body as HTML with `{{key}}` placeholders. */
  html?: string | null;
  text?: string | null;
  variables?: VariableBody[] | null;
  /** A visual layout: `{ sections: [{ columns: [[block, …]] }] }`, compiled to HTML when saved. */
  layout?: { [key: string]: any } | null;
  brand_overrides?: BrandOverridesBody | null;
}

interface CreateTemplateBody extends TemplateContentBody {
  name: string;
  /** Lower-case letters, digits, `-`, `_`; at most 63 characters; never a UUID. */
  alias?: string | null;
  /** Slug of a starter to copy (welcome, newsletter, promotion, abandoned-cart); send this or `html`. */
  starter?: string | null;
}

interface UpdateTemplateBody extends TemplateContentBody {
  name?: string;
  alias?: string | null;
  /** Accepted when equal to the path id. */
  id?: string;
}

interface RenderBody {
  /** Values by variable key. */
  variables?: { [key: string]: any } | null;
  /** A version of the template; default its current version. */
  version_id?: string;
  /** Trigger event data for `{{{event.key}}}` slots. */
  event?: { [key: string]: any } | null;
}

interface TestSendBody {
  to: string | string[];
  variables?: { [key: string]: any } | null;
  /** Overrides the template's `from`. */
  from?: string;
  subject?: string;
}

interface TemplateVariableView {
  key: string;
  type: VariableType;
  /** Of the variable's type, or null. */
  fallback_value: any;
  created_at: string;
  updated_at: string;
}

interface TemplateItem {
  id: string;
  name: string;
  alias: string | null;
  status: 'draft' | 'published';
  published_at: string | null;
  created_at: string;
  updated_at: string;
}

interface Template extends TemplateItem {
  object: 'template';
  current_version_id: string;
  current_version_number: number;
  has_unpublished_versions: boolean;
  from: string | null;
  subject: string | null;
  reply_to: string[] | null;
  html: string;
  text: string | null;
  variables: TemplateVariableView[];
  layout: any;
  starter: string | null;
  preview_text: string | null;
  brand_overrides: BrandOverridesBody | null;
}

interface TemplatePreview {
  object: 'template_preview';
  template_id: string;
  version_id: string;
  from: string | null;
  subject: string | null;
  preview_text: string | null;
  html: string;
  text: string | null;
  missing_variables: string[];
}

/** One pre-send check's verdict. */
interface TemplateCheck {
  name: 'links' | 'link_types' | 'variables' | 'subject' | 'preview_text' | 'alt_text' | 'image_weight' | 'text_and_images' | 'unsubscribe';
  status: 'pass' | 'warn' | 'fail';
  message: string;
}

interface TemplateChecks {
  object: 'template_checks';
  template_id: string;
  version_id: string;
  checks: TemplateCheck[];
}

type TemplateRef = { object: 'template'; id: string };

@Route('templates')
@Tags('templates')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class TemplatesController extends SvcController {
  /**
   * Writes version 1 as a draft, from `html` or a `starter`; publish it before sending with it.
   * @summary Create a template
   */
  @Post()
  @OperationId('createTemplate')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'templates:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateTemplateBody): Promise<TemplateRef> {
    const result = await this.deps.content.templates.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  /**
   * The team's live templates, newest first.
   * @summary List templates
   */
  @Get()
  @OperationId('listTemplates')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'templates:read')
  public async list(@Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<TemplateItem>> {
    return this.deps.content.templates.list(principalOf(req).teamId, { limit, after, before });
  }

  /**
   * By id or alias; shows the current version (`has_unpublished_versions` when it is an open draft).
   * @summary Retrieve a template
   */
  @Get('{template_id}')
  @OperationId('getTemplate')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'templates:read')
  public async get(@Request() req: ExRequest, @Path() template_id: string): Promise<Template> {
    return this.deps.content.templates.get(principalOf(req).teamId, template_id) as Promise<Template>;
  }

  /**
   * Edits the open draft, or opens the next one when the current version is published; sends keep
   * the published version until the next publish.
   * @summary Update a template
   */
  @Patch('{template_id}')
  @OperationId('updateTemplate')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'templates:write')
  public async update(@Request() req: ExRequest, @Path() template_id: string, @Body() body: UpdateTemplateBody): Promise<TemplateRef> {
    return this.deps.content.templates.update(principalOf(req).teamId, template_id, body);
  }

  /**
   * Gone for every read and send; its alias is free again. Sent emails keep the version they used.
   * @summary Delete a template
   */
  @Delete('{template_id}')
  @OperationId('removeTemplate')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'templates:write')
  public async remove(@Request() req: ExRequest, @Path() template_id: string): Promise<TemplateRef & { deleted: true }> {
    return this.deps.content.templates.remove(principalOf(req).teamId, template_id);
  }

  /**
   * The current version becomes the one sends use.
   * @summary Publish a template
   */
  @Post('{template_id}/publish')
  @OperationId('publishTemplate')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'templates:write')
  public async publish(@Request() req: ExRequest, @Path() template_id: string): Promise<TemplateRef> {
    return this.deps.content.templates.publish(principalOf(req).teamId, template_id);
  }

  /**
   * A new draft template with the current version's content, without an alias.
   * @summary Duplicate a template
   */
  @Post('{template_id}/duplicate')
  @OperationId('duplicateTemplate')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'templates:write')
  public async duplicate(@Request() req: ExRequest, @Path() template_id: string): Promise<TemplateRef> {
    return this.deps.content.templates.duplicate(principalOf(req).teamId, template_id);
  }

  /**
   * Renders a version (default the current one) with the given variables: subject, html and text.
   * Every block shows; no repeat group is drawn.
   * @summary Preview a template
   */
  @Post('{template_id}/preview')
  @OperationId('previewTemplate')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'templates:read')
  public async preview(@Request() req: ExRequest, @Path() template_id: string, @Body() body?: RenderBody): Promise<TemplatePreview> {
    return this.deps.content.templateSends.preview(principalOf(req).teamId, template_id, body ?? {});
  }

  /**
   * Pre-send checks over a version as previewed: links, variables without value, subject, preview
   * text, alt text, image weight, text beside images, unsubscribe link. Each is pass, warn or fail;
   * nothing is gated and links are never visited.
   * @summary Check a template
   */
  @Post('{template_id}/checks')
  @OperationId('checkTemplate')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'sending_access')
  @Extension('x-svc-scope', 'templates:read')
  public async checks(@Request() req: ExRequest, @Path() template_id: string, @Body() body?: RenderBody): Promise<TemplateChecks> {
    return this.deps.content.templateSends.checks(principalOf(req).teamId, template_id, body ?? {});
  }

  /**
   * Sends the current version (a draft too) to the given addresses through the ordinary send path.
   * @summary Send a test of a template
   */
  @Post('{template_id}/test')
  @OperationId('testTemplate')
  @Response<ErrorBody>(400, badSendRequest)
  @Response<ErrorBody>(403, sendForbidden)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, invalidSend)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'templates:write')
  public async test(@Request() req: ExRequest, @Path() template_id: string, @Body() body: TestSendBody): Promise<{ id: string }> {
    const p = principalOf(req);
    return this.deps.sending.emails.sendTemplateTest({ teamId: p.teamId, apiKeyId: p.apiKeyId, domainId: p.domainId }, template_id, body);
  }
}
