// Who is calling. Today only API keys authenticate; OAuth access tokens and console sessions
// (spec document 2) arrive as further kinds of the same principal, so controllers, the rate limit
// and the request log never ask which credential it was: they read the team, and the guard asks
// `mayCall` whether the credential reaches the operation.

/** The least credential an operation needs (spec Authentication 6). */
export type Permission = 'none' | 'sending_access' | 'full_access' | 'session' | 'store_access' | null;

/** What an operation asks of its caller: an API key's permission, or an OAuth token's scope. */
export interface Requirement {
  permission: Permission;
  /** `x-svc-scope`: what an OAuth access token must carry (e.g. `emails:send`); null: none needed. */
  scope: string | null;
}

interface Common {
  teamId: string;
  /** The API key that called, for request logs and emails' api_key_id; null for other credentials. */
  apiKeyId: string | null;
  /** A sending_access key pinned to one domain; null when any domain of the team may send. */
  domainId: string | null;
}

export type Principal =
  | (Common & { kind: 'api_key'; apiKeyId: string; permission: 'full_access' | 'sending_access' })
  | (Common & { kind: 'oauth_token'; apiKeyId: null; tokenId: string; scopes: readonly string[] })
  | (Common & { kind: 'dashboard_session'; apiKeyId: null; sessionId: string; memberId: string });

/** Whether this principal reaches an operation with this requirement. */
export function mayCall(principal: Principal, needs: Requirement): boolean {
  switch (principal.kind) {
    case 'api_key':
      // session, store_access and null operations are not reachable with an API key.
      if (needs.permission === 'sending_access') return true;
      return needs.permission === 'full_access' && principal.permission === 'full_access';
    case 'oauth_token':
      return needs.scope !== null && principal.scopes.includes(needs.scope);
    case 'dashboard_session':
      return needs.permission !== 'store_access' && needs.permission !== null;
  }
}
