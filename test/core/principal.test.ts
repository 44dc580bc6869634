import t from 'tap';
import { mayCall, type Principal } from '../../core/principal.js';

// The general principal: an API key by its permission, an OAuth token by its scopes, a console
// session by being a member; the guard asks only mayCall.
const key = (permission: 'full_access' | 'sending_access'): Principal => ({ kind: 'api_key', teamId: 't', apiKeyId: 'k', permission, domainId: null });
const token: Principal = { kind: 'oauth_token', teamId: 't', apiKeyId: null, domainId: null, tokenId: 'o', scopes: ['emails:send', 'emails:read'] };
const session: Principal = { kind: 'dashboard_session', teamId: 't', apiKeyId: null, domainId: null, sessionId: 's', memberId: 'm' };

t.test('API keys reach by permission', async (t) => {
  t.equal(mayCall(key('sending_access'), { permission: 'sending_access', scope: 'emails:send' }), true);
  t.equal(mayCall(key('sending_access'), { permission: 'full_access', scope: 'domains:read' }), false);
  t.equal(mayCall(key('full_access'), { permission: 'full_access', scope: 'domains:read' }), true);
  for (const permission of ['session', 'store_access', null] as const) {
    t.equal(mayCall(key('full_access'), { permission, scope: null }), false, `never a ${permission} route`);
  }
});

t.test('OAuth tokens reach by scope alone', async (t) => {
  t.equal(mayCall(token, { permission: 'sending_access', scope: 'emails:send' }), true);
  t.equal(mayCall(token, { permission: 'full_access', scope: 'domains:read' }), false);
  t.equal(mayCall(token, { permission: 'full_access', scope: null }), false, 'an operation without a scope is not for tokens');
});

t.test('console sessions reach member routes, not store routes', async (t) => {
  t.equal(mayCall(session, { permission: 'session', scope: null }), true);
  t.equal(mayCall(session, { permission: 'full_access', scope: 'domains:read' }), true);
  t.equal(mayCall(session, { permission: 'store_access', scope: null }), false);
});
