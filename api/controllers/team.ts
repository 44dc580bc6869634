import { Body, Extension, Get, OperationId, Patch, Post, Query, Request, Response, Route, SuccessResponse, Tags } from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import type { BrandKitUploadView, MemberView, TeamView } from '../../core/team/index.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, imageRefused, internal, linksUnavailable, rateLimited, teamUnavailable, unauthorized, unavailable,
  unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

/** The postal address of the sender identity; `country` is an upper-case ISO 3166-1 alpha-2 code. */
interface PostalAddressBody {
  line1?: string;
  line2?: string | null;
  city?: string;
  state?: string | null;
  postal_code?: string | null;
  country?: string;
}

/** Sent whole: every field present; null returns a field to its default. */
interface BrandKitBody {
  /** An absolute https URL, or the `url` of an image this team uploaded (POST /team/brand-kit/uploads), whatever its scheme. */
  logo_url: string | null;
  /** Six-digit hex, e.g. #1a2b3c. */
  primary_color: string | null;
  accent_color: string | null;
  /** system, helvetica, arial, verdana, georgia, times or courier. */
  font: string | null;
  /** square, rounded or pill. */
  button_style: string | null;
  company_name: string | null;
  address: string | null;
  footer_text: string | null;
}

interface UpdateTeamBody {
  /** Trimmed, one line, 1-80 characters; the slug does not change. */
  name?: string;
  /** One line, at most 200 characters; needs a postal address (already set, or sent with it). */
  sender_name?: string | null;
  postal_address?: PostalAddressBody;
  /** `true` needs an AI provider configured on the appliance (else 503). */
  ai_assist_enabled?: boolean;
  audience_from_sends?: boolean;
  brand_kit?: BrandKitBody | null;
}

interface BrandKitUploadBody {
  /**
   * The image, base64 (a base64 `data:` URL is accepted too; its declared type is ignored). The type is read from the bytes:
   * PNG or JPEG up to 256 KB and 4096 pixels a side, or SVG up to 32 KB with no script, event handler, link,
   * animation, embedded HTML or external reference.
   */
  content: string;
}

@Route('team')
@Tags('team')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
export class TeamController extends SvcController {
  /**
   * The calling key's team: profile, plan and its limits, sender identity, brand kit, sending tier and risk state.
   * @summary Retrieve the team
   */
  @Get()
  @OperationId('getTeam')
  @Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'team:read')
  public async get(@Request() req: ExRequest): Promise<TeamView> {
    return this.deps.audience.team.get(principalOf(req).teamId);
  }

  /**
   * Changes the profile: any of the fields, at least one. A team with no postal address must send one before (or with) `sender_name`.
   * @summary Update the team
   */
  @Patch()
  @OperationId('updateTeam')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Response<ErrorBody>(501, 'not_implemented: `audience_from_sends` cannot be turned off on this version yet.')
  @Response<ErrorBody, { 'retry-after': string }>(503, teamUnavailable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'team:write')
  public async update(@Request() req: ExRequest, @Body() body: UpdateTeamBody): Promise<TeamView> {
    return this.deps.audience.team.update(principalOf(req), body);
  }

  /**
   * The people of the team (added by the operator with `svc admin member add`), oldest last.
   * @summary List team members
   */
  @Get('members')
  @OperationId('listTeamMembers')
  @Response<ErrorBody>(422, unprocessable)
  @Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', null)
  public async members(
    @Request() req: ExRequest,
    @Query() limit?: string,
    @Query() after?: string,
    @Query() before?: string,
  ): Promise<ListEnvelope<MemberView>> {
    return this.deps.audience.members.list(principalOf(req).teamId, { limit, after, before });
  }

  /**
   * Stores an image for the brand kit and answers its hosted URL, to use as `brand_kit.logo_url`. An SVG is stored as the sanitiser writes it out; one it would have to change in a way that matters is refused (422).
   * @summary Upload a brand kit image
   */
  @Post('brand-kit/uploads')
  @OperationId('uploadBrandKitImage')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, imageRefused)
  @Response<ErrorBody, { 'retry-after': string }>(503, linksUnavailable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'team:write')
  public async uploadBrandKitImage(@Request() req: ExRequest, @Body() body: BrandKitUploadBody): Promise<BrandKitUploadView> {
    const upload = await this.deps.audience.brandKitUploads.upload(principalOf(req).teamId, body);
    this.setStatus(201);
    return upload;
  }
}
