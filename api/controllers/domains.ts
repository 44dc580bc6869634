import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route,
  SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { AutoconfigureResult, ClaimView, DomainListItem, DomainView } from '../../core/domains/index.js';
import type { ListEnvelope } from '../../core/pagination.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, dnsUnavailable, domainConflict, domainLocked, forbidden, internal, notFound,
  rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

interface CapabilitiesBody {
  sending?: 'enabled' | 'disabled';
  receiving?: 'enabled' | 'disabled';
}

interface CreateDomainBody {
  name: string;
  /** us-east-1 (default), eu-west-1, sa-east-1 or ap-northeast-1; fixed after creation. */
  region?: string;
  custom_return_path?: string;
  capabilities?: CapabilitiesBody;
  open_tracking?: boolean;
  click_tracking?: boolean;
  tls?: string;
  tracking_subdomain?: string;
  receiving_host?: string;
  confirm_replace_mx?: boolean;
}

interface UpdateDomainBody {
  capabilities?: CapabilitiesBody;
  open_tracking?: boolean;
  click_tracking?: boolean;
  tls?: string;
  tracking_subdomain?: string;
  custom_return_path?: string;
  receiving_host?: string;
  confirm_replace_mx?: boolean;
  /** Accepted only when equal to the domain's region. */
  region?: string;
  /** Accepted when equal to the path id (SDKs send it). */
  id?: string;
}

interface ClaimBody {
  name: string;
  region?: string;
  custom_return_path?: string;
  open_tracking?: boolean;
  click_tracking?: boolean;
  tracking_subdomain?: string;
}

interface AutoconfigureBody {
  provider?: string;
  api_token?: string;
  keep_token?: boolean;
}

@Route('domains')
@Tags('domains')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class DomainsController extends SvcController {
  /**
   * Adds a domain; the answer lists the DNS records to publish.
   * @summary Add a domain
   */
  @Post()
  @OperationId('createDomain')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(409, domainConflict)
  @Response<ErrorBody>(422, unprocessable)
  @Response<ErrorBody>(503, dnsUnavailable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateDomainBody): Promise<DomainView> {
    this.setStatus(201);
    return this.deps.sending.domains.create(principalOf(req).teamId, body);
  }

  /**
   * The team's domains, newest first.
   * @summary List domains
   */
  @Get()
  @OperationId('listDomains')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:read')
  public async list(@Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string): Promise<ListEnvelope<DomainListItem>> {
    return this.deps.sending.domains.list(principalOf(req).teamId, { limit, after, before });
  }

  /**
   * Takes over a domain another team holds verified: publish the returned TXT record at the root.
   * @summary Claim a domain
   */
  @Post('claim')
  @OperationId('claimDomain')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:write')
  public async claim(@Request() req: ExRequest, @Body() body: ClaimBody): Promise<ClaimView> {
    this.setStatus(201);
    return this.deps.sending.domains.claim(principalOf(req).teamId, body);
  }

  /**
   * The domain with the records it asks for and their statuses.
   * @summary Retrieve a domain
   */
  @Get('{id}')
  @OperationId('getDomain')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:read')
  public async get(@Request() req: ExRequest, @Path() id: string): Promise<DomainView> {
    return this.deps.sending.domains.get(principalOf(req).teamId, id);
  }

  /**
   * Changes capabilities, tracking, TLS or the return path; the region is fixed.
   * @summary Update a domain
   */
  @Patch('{id}')
  @OperationId('updateDomain')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(409, domainConflict)
  @Response<ErrorBody>(422, unprocessable)
  @Response<ErrorBody>(503, dnsUnavailable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:write')
  public async update(@Request() req: ExRequest, @Path() id: string, @Body() body: UpdateDomainBody): Promise<{ object: 'domain'; id: string }> {
    return this.deps.sending.domains.update(principalOf(req).teamId, id, body);
  }

  /**
   * Deletes the domain; mail can no longer be sent from it.
   * @summary Delete a domain
   */
  @Delete('{id}')
  @OperationId('deleteDomain')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:write')
  public async remove(@Request() req: ExRequest, @Path() id: string): Promise<{ object: 'domain'; id: string; deleted: true }> {
    return this.deps.sending.domains.remove(principalOf(req).teamId, id);
  }

  /**
   * Checks the records now; a repeat within 15 seconds returns the current state without asking DNS.
   * @summary Verify a domain
   */
  @Post('{id}/verify')
  @OperationId('verifyDomain')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(409, domainLocked)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:write')
  public async verify(@Request() req: ExRequest, @Path() id: string): Promise<DomainView> {
    return this.deps.sending.domains.verify(principalOf(req).teamId, id);
  }

  /**
   * Publishes a new DKIM selector beside the old; signing switches once its record verifies.
   * @summary Rotate the DKIM key
   */
  @Post('{id}/dkim/rotate')
  @OperationId('rotateDomainDkim')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(409, domainLocked)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:write')
  public async rotateDkim(@Request() req: ExRequest, @Path() id: string): Promise<DomainView> {
    return this.deps.sending.domains.rotateDkim(principalOf(req).teamId, id);
  }

  /**
   * The claim on the domain and the TXT record it waits for.
   * @summary Retrieve a domain claim
   */
  @Get('{id}/claim')
  @OperationId('getDomainClaim')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:read')
  public async getClaim(@Request() req: ExRequest, @Path() id: string): Promise<ClaimView> {
    return this.deps.sending.domains.getClaim(principalOf(req).teamId, id);
  }

  /**
   * Checks the claim record now; the domain moves to this team once it verifies.
   * @summary Verify a domain claim
   */
  @Post('{id}/claim/verify')
  @OperationId('verifyDomainClaim')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:write')
  public async verifyClaim(@Request() req: ExRequest, @Path() id: string): Promise<ClaimView> {
    return this.deps.sending.domains.verifyClaim(principalOf(req).teamId, id);
  }

  /**
   * Writes the records through the DNS provider (Cloudflare) with a token scoped to this zone.
   * @summary Publish the records through the DNS provider
   */
  @Post('{id}/autoconfigure')
  @OperationId('autoconfigureDomain')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(409, domainLocked)
  @Response<ErrorBody>(422, unprocessable)
  @Response<ErrorBody>(503, dnsUnavailable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:write')
  public async autoconfigure(@Request() req: ExRequest, @Path() id: string, @Body() body?: AutoconfigureBody): Promise<AutoconfigureResult> {
    return this.deps.sending.domains.autoconfigure(principalOf(req).teamId, id, body ?? {});
  }

  /**
   * Deletes the DNS provider token kept for the domain.
   * @summary Forget the DNS provider token
   */
  @Delete('{id}/autoconfigure/credential')
  @OperationId('forgetDomainCredential')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'domains:write')
  public async forgetCredential(@Request() req: ExRequest, @Path() id: string): Promise<{ object: 'autoconfigure_credential'; id: string; deleted: true }> {
    return this.deps.sending.domains.forgetCredential(principalOf(req).teamId, id);
  }
}
