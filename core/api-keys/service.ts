import type { ApiKeysRepo } from '../../storage/repos/index.js';
import type { ApiKeyRow } from '../../storage/sql/index.js';
import { isoNow, type Clock } from '../clock.js';
import { invalidParameter, missingField, notFound, ServiceError, validationError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import { listOf, parsePageQuery, parseSearch, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { issueToken, publicIdOfReference } from './tokens.js';

export type KeyPermission = ApiKeyRow['permission'];
export type InboxAccess = ApiKeyRow['inbox_access'];

export interface CreateApiKeyInput {
  name?: string;
  permission?: KeyPermission;
  domain_id?: string | null;
  inbox_access?: InboxAccess;
  inbox_channel_ids?: string[] | null;
}

/** Who asks: a team's API key, or the operator on the admin socket. */
export type Actor = { kind: 'api_key' } | { kind: 'operator' };

/** Answers whether a domain id is a verified domain of the team (the domains area provides it). */
export type VerifiedDomainCheck = (teamId: string, domainId: string) => Promise<boolean>;

export interface ApiKeyView {
  id: string;
  name: string;
  permission: KeyPermission;
  domain_id: string | null;
  inbox_access: InboxAccess;
  inbox_channel_ids: string[] | null;
  status: ApiKeyRow['status'];
  created_at: string;
  last_used_at: string | null;
}

/** What the operator's revocation did: `revoked` false when the key already was. */
export interface OperatorRevocation {
  object: 'api_key';
  id: string;
  team_id: string;
  name: string;
  revoked: boolean;
}

export interface ListApiKeysQuery extends RawPageQuery {
  status?: string;
  search?: string;
  permission?: string;
  inbox_access?: string;
}

export interface ApiKeysDeps {
  repo: ApiKeysRepo;
  clock: Clock;
  isVerifiedDomain: VerifiedDomainCheck;
}

export function apiKeysService(deps: ApiKeysDeps) {
  return {
    async create(teamId: string, input: CreateApiKeyInput, actor: Actor): Promise<{ id: string; token: string }> {
      const row = await validateCreate(deps, teamId, input, actor);
      const issued = issueToken();
      await deps.repo.insert({ ...row, public_id: issued.publicId, token_hash: issued.hash });
      return { id: row.id, token: issued.token };
    },

    async list(teamId: string | undefined, query: ListApiKeysQuery): Promise<ListEnvelope<ApiKeyView>> {
      const page = parsePageQuery(query);
      const status = oneOf('status', query.status, ['active', 'revoked', 'all'] as const) ?? 'active';
      const result = await deps.repo.list(teamId, {
        status,
        search: parseSearch(query.search),
        permission: oneOf('permission', query.permission, ['full_access', 'sending_access'] as const),
        inbox_access: oneOf('inbox_access', query.inbox_access, ['none', 'create', 'read', 'write'] as const),
      }, page);
      return listOf(result.data.map(toView), result.has_more);
    },

    async rename(teamId: string, id: string, name: string | undefined, bodyId?: string): Promise<{ object: 'api_key'; id: string }> {
      if (bodyId !== undefined && bodyId !== id) throw validationError(400, 'id', 'The `id` field, when sent, must equal the id in the path.');
      const checked = checkName(name);
      if (!(await deps.repo.rename(teamId, id, checked))) throw notFound('API key');
      return { object: 'api_key', id };
    },

    async revoke(teamId: string, id: string): Promise<{ object: 'api_key'; id: string; deleted: true }> {
      const key = await deps.repo.byId(teamId, id);
      if (!key) throw notFound('API key');
      await deps.repo.revoke(teamId, id, isoNow(deps.clock));
      return { object: 'api_key', id, deleted: true };
    },

    /**
     * The operator's answer to a leaked key (admin socket, no rate limit): any team's key, named by
     * its id or by the token (or its start up to the public id, as a leak report shows it). The
     * same update as `DELETE /api-keys/{id}`, so the same trigger moves `auth_generation` and every
     * process refuses the key on its next request.
     */
    async revokeByReference(reference: unknown): Promise<OperatorRevocation> {
      if (typeof reference !== 'string' || reference.trim() === '') throw missingField('key');
      const key = await findByReference(deps.repo, reference.trim());
      const revoked = await deps.repo.revoke(key.team_id, key.id, isoNow(deps.clock));
      return { object: 'api_key', id: key.id, team_id: key.team_id, name: key.name, revoked };
    },
  };
}

export type ApiKeysService = ReturnType<typeof apiKeysService>;

async function validateCreate(deps: ApiKeysDeps, teamId: string, input: CreateApiKeyInput, actor: Actor): Promise<Omit<ApiKeyRow, 'public_id' | 'token_hash'>> {
  const name = checkName(input.name);
  const permission = input.permission ?? 'full_access';
  const inboxAccess = input.inbox_access ?? 'none';
  const needsDashboard = inboxAccess !== 'none' || (input.inbox_channel_ids !== undefined && input.inbox_channel_ids !== null);
  if (needsDashboard && actor.kind !== 'operator') {
    throw new ServiceError(403, 'invalid_permission', 'Inbox access on an API key can only be granted by a team admin signed in to the dashboard.');
  }
  const domainId = input.domain_id ?? null;
  if (domainId !== null) {
    if (permission === 'full_access') throw validationError(422, 'domain_id', 'A `full_access` key cannot be pinned to a domain; use `sending_access`.');
    if (!(await deps.isVerifiedDomain(teamId, domainId))) throw validationError(422, 'domain_id', 'The domain does not exist in this team or is not verified.');
  }
  return {
    id: newId(), team_id: teamId, name, permission, domain_id: domainId, inbox_access: inboxAccess,
    inbox_channel_ids: input.inbox_channel_ids ? JSON.stringify(input.inbox_channel_ids) : null,
    status: 'active', created_at: isoNow(deps.clock), last_used_at: null, revoked_at: null,
  };
}

async function findByReference(repo: ApiKeysRepo, reference: string): Promise<ApiKeyRow> {
  if (looksLikeId(reference)) {
    const key = await repo.byIdAnyTeam(reference.toLowerCase());
    if (!key) throw notFound('API key');
    return key;
  }
  const publicId = publicIdOfReference(reference);
  if (publicId === undefined) {
    throw validationError(422, 'key', 'Name the key by its id, or by its token: the whole token or at least its first 20 characters (`svc_` and 16 hex digits).');
  }
  const found = await repo.byPublicId(publicId);
  if (!found) throw notFound('API key');
  return found.key;
}

function checkName(name: string | undefined): string {
  if (name === undefined || name === null) throw missingField('name');
  if (name.trim() === '') throw validationError(422, 'name', 'The `name` field must not be blank.');
  if (name.length > 255) throw validationError(422, 'name', 'The `name` field must be at most 255 characters.');
  return name;
}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw invalidParameter(name, `The \`${name}\` parameter must be one of: ${allowed.join(', ')}.`);
  return value as T;
}

export function toView(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id, name: row.name, permission: row.permission, domain_id: row.domain_id,
    inbox_access: row.inbox_access, inbox_channel_ids: row.inbox_channel_ids ? JSON.parse(row.inbox_channel_ids) as string[] : null,
    status: row.status, created_at: row.created_at, last_used_at: row.last_used_at,
  };
}
