import type { ApiKeyRow } from '../../storage/sql/index.js';
import { ServiceError } from '../errors.js';
import type { KeyLookup } from './key-cache.js';
import { parseToken, secretMatches } from './tokens.js';

import { mayCall, type Permission, type Principal } from '../principal.js';

export type { Permission, Principal };

/**
 * Resolves an Authorization header to the calling key, in the spec's order of refusals:
 * missing → invalid → revoked → suspended → wrong class of key.
 */
export async function authenticate(keys: KeyLookup, header: string | undefined, needed: Permission, scope: string | null = null): Promise<Principal> {
  const bearer = header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  if (bearer === undefined) throw new ServiceError(401, 'missing_api_key', 'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer <API_KEY>');
  return authenticateToken(keys, bearer, needed, scope);
}

/**
 * Resolves an API key given by itself (SMTP submission's password) to the calling key, with the
 * same refusals as the Authorization header after its shape: invalid → revoked → suspended → class.
 */
export async function authenticateToken(keys: KeyLookup, token: string, needed: Permission, scope: string | null = null): Promise<Principal> {
  const parsed = parseToken(token);
  const found = parsed ? await keys.byPublicId(parsed.publicId) : undefined;
  if (!parsed || !found || !secretMatches(parsed.secret, found.key.token_hash)) {
    throw new ServiceError(401, 'invalid_api_key', 'API key is invalid.');
  }
  const { key, team } = found;
  if (key.status === 'revoked') throw new ServiceError(403, 'restricted_api_key', 'This API key has been revoked.');
  if (key.status === 'suspended' || team.status === 'suspended') {
    throw new ServiceError(403, 'suspended_api_key', 'This API key is suspended.');
  }
  const principal: Principal = { kind: 'api_key', teamId: key.team_id, apiKeyId: key.id, permission: key.permission, domainId: key.domain_id };
  if (!mayCall(principal, { permission: needed, scope })) {
    throw new ServiceError(401, 'restricted_api_key', 'This API key is restricted to only send emails.');
  }
  return principal;
}

