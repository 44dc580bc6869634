import t from 'tap';
import BetterSqlite3 from 'better-sqlite3';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';

// A roomy bucket: this file checks key management, not the rate limit (rate-limit.test.ts does).
const app = await startTestAppliance({ env: { SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
t.teardown(() => app.stop());
const base = app.baseUrl;
const sqlite = app.appliance.services.database.sqlite;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface KeyItem { id: string; name: string; status: string; permission: string; created_at: string; last_used_at: string | null }

async function createKey(token: string, body: Record<string, unknown>): Promise<{ id: string; token: string }> {
  const r = await call(base, 'POST', '/api-keys', { token, body });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function listAll(token: string, qs = ''): Promise<KeyItem[]> {
  const r = await call(base, 'GET', `/api-keys?limit=100${qs ? `&${qs}` : ''}`, { token });
  if (r.status !== 200) throw new Error(`list failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

t.test('create', async (t) => {
  const owner = await app.newTeam('Creators');
  const other = await app.newTeam('Others');

  t.test('201 with id and token only; the token starts svc_ and works at once', async (t) => {
    const r = await call(base, 'POST', '/api-keys', { token: owner.token, body: { name: 'Created' } });
    t.equal(r.status, 201);
    t.same(Object.keys(r.body).sort(), ['id', 'token']);
    t.match(r.body.id, uuid);
    t.match(r.body.token, /^svc_/);
    const used = await call(base, 'GET', '/api-keys', { token: r.body.token });
    t.equal(used.status, 200, 'the new token authenticates');
    const listed = await listAll(owner.token);
    const item = listed.find((k) => k.id === r.body.id);
    t.ok(item, 'listed in the creating team');
    t.equal(item?.permission, 'full_access', 'full_access by default');
    t.equal(item?.status, 'active');
    t.notOk((await listAll(other.token)).some((k) => k.id === r.body.id), 'not in another team');
  });

  t.test('name is required: 422 missing_required_field', async (t) => {
    for (const body of [{}, { permission: 'sending_access' }]) {
      const r = await call(base, 'POST', '/api-keys', { token: owner.token, body });
      t.equal(r.status, 422);
      t.equal(r.body.name, 'missing_required_field');
      t.match(r.body.errors, [{ path: 'name' }]);
    }
  });

  t.test('name up to 255 characters; longer is 422 validation_error', async (t) => {
    const ok = await call(base, 'POST', '/api-keys', { token: owner.token, body: { name: 'n'.repeat(255) } });
    t.equal(ok.status, 201);
    const long = await call(base, 'POST', '/api-keys', { token: owner.token, body: { name: 'n'.repeat(256) } });
    t.equal(long.status, 422);
    t.equal(long.body.name, 'validation_error');
    t.match(long.body.errors, [{ path: 'name' }]);
  });

  t.test('a full_access key with a domain_id is 422 validation_error', async (t) => {
    for (const body of [{ name: 'k', domain_id: crypto.randomUUID() }, { name: 'k', permission: 'full_access', domain_id: crypto.randomUUID() }]) {
      const r = await call(base, 'POST', '/api-keys', { token: owner.token, body });
      t.equal(r.status, 422);
      t.equal(r.body.name, 'validation_error');
      t.match(r.body.errors, [{ path: 'domain_id' }]);
    }
  });

  t.test('a sending_access key pinned to an unknown domain is 422 validation_error', async (t) => {
    const before = (await listAll(owner.token, 'status=all')).length;
    const r = await call(base, 'POST', '/api-keys', { token: owner.token, body: { name: 'pinned', permission: 'sending_access', domain_id: crypto.randomUUID() } });
    t.equal(r.status, 422);
    t.equal(r.body.name, 'validation_error');
    t.match(r.body.errors, [{ path: 'domain_id' }]);
    t.equal((await listAll(owner.token, 'status=all')).length, before, 'nothing was created');
  });

  t.test('a sending_access key without a domain is fine', async (t) => {
    const r = await call(base, 'POST', '/api-keys', { token: owner.token, body: { name: 'sender', permission: 'sending_access' } });
    t.equal(r.status, 201);
    const item = (await listAll(owner.token)).find((k) => k.id === r.body.id);
    t.equal(item?.permission, 'sending_access');
  });

  t.test('Inbox access above none needs the dashboard: 403 invalid_permission for an API key', async (t) => {
    for (const body of [
      { name: 'i', inbox_access: 'read' },
      { name: 'i', inbox_access: 'write' },
      { name: 'i', inbox_access: 'create' },
      { name: 'i', inbox_channel_ids: [crypto.randomUUID()] },
    ]) {
      const r = await call(base, 'POST', '/api-keys', { token: owner.token, body });
      t.equal(r.status, 403, JSON.stringify(body));
      t.equal(r.body.name, 'invalid_permission');
    }
    const none = await call(base, 'POST', '/api-keys', { token: owner.token, body: { name: 'no inbox', inbox_access: 'none', inbox_channel_ids: null } });
    t.equal(none.status, 201, 'inbox_access none is allowed');
  });
});

t.test('the token is stored only as a hash', async (t) => {
  const owner = await app.newTeam('Hashing');
  const created = await createKey(owner.token, { name: 'Hashed' });
  const secret = created.token.split('_').slice(2).join('_');
  t.ok(secret.length >= 32, 'the token has a long secret part');
  const row = sqlite.prepare('select * from api_keys where id = ?').get(created.id) as Record<string, unknown>;
  t.ok(row, 'the row exists');
  for (const [column, value] of Object.entries(row)) {
    const text = String(value);
    t.notOk(text.includes(created.token), `${column} does not hold the token`);
    t.notOk(text.includes(secret), `${column} does not hold the secret`);
  }
  // and no column of any key row holds any token issued here
  const all = sqlite.prepare('select * from api_keys').all() as Record<string, unknown>[];
  const dump = JSON.stringify(all);
  for (const token of [created.token, owner.token]) {
    t.notOk(dump.includes(token.split('_').slice(2).join('_')), 'no secret anywhere in api_keys');
  }
});

t.test('list', async (t) => {
  const owner = await app.newTeam('Listing');
  const created: string[] = [owner.keyId];
  for (let i = 0; i < 25; i++) created.push((await createKey(owner.token, { name: `key ${String(i).padStart(2, '0')}` })).id);
  const newestFirst = [...created].reverse();

  t.test('envelope, newest first, default limit 20, no token', async (t) => {
    const r = await call(base, 'GET', '/api-keys', { token: owner.token });
    t.equal(r.status, 200);
    t.equal(r.body.object, 'list');
    t.equal(r.body.has_more, true);
    t.equal(r.body.data.length, 20);
    t.same(r.body.data.map((k: KeyItem) => k.id), newestFirst.slice(0, 20));
    t.equal(r.body.data[0].name, 'key 24');
    for (const item of r.body.data) {
      t.notOk('token' in item, 'no token in a listed key');
      t.notOk('token_hash' in item, 'no hash in a listed key');
      t.notOk('public_id' in item);
      t.match(item, { id: String, name: String, permission: String, status: String, created_at: String });
      t.ok('last_used_at' in item, 'last_used_at shown');
    }
    const times = r.body.data.map((k: KeyItem) => k.created_at);
    t.same(times, [...times].sort().reverse(), 'created_at does not increase');
  });

  t.test('limit, after and has_more walk every key once', async (t) => {
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const r = await call(base, 'GET', `/api-keys?limit=7${after ? `&after=${after}` : ''}`, { token: owner.token });
      t.equal(r.status, 200);
      pages++;
      seen.push(...r.body.data.map((k: KeyItem) => k.id));
      if (!r.body.has_more) break;
      t.equal(r.body.data.length, 7, 'a page that has more is full');
      after = r.body.data.at(-1).id;
      if (pages > 10) break;
    }
    t.equal(pages, 4, '26 keys in pages of 7');
    t.same(seen, newestFirst);
  });

  t.test('before gives the page preceding an item', async (t) => {
    const r = await call(base, 'GET', `/api-keys?limit=5&before=${newestFirst[5]}`, { token: owner.token });
    t.equal(r.status, 200);
    t.same(r.body.data.map((k: KeyItem) => k.id), newestFirst.slice(0, 5));
    t.equal(r.body.has_more, false, 'nothing newer than the first page');
    const mid = await call(base, 'GET', `/api-keys?limit=5&before=${newestFirst[20]}`, { token: owner.token });
    t.same(mid.body.data.map((k: KeyItem) => k.id), newestFirst.slice(15, 20));
    t.equal(mid.body.has_more, true, 'more newer items exist');
  });

  t.test('limit 100 gives everything, has_more false; limit 1', async (t) => {
    const all = await call(base, 'GET', '/api-keys?limit=100', { token: owner.token });
    t.equal(all.body.data.length, 26);
    t.equal(all.body.has_more, false);
    const one = await call(base, 'GET', '/api-keys?limit=1', { token: owner.token });
    t.same(one.body.data.map((k: KeyItem) => k.id), [newestFirst[0]]);
    t.equal(one.body.has_more, true);
  });

  t.test('another team\'s key id as a cursor leaks nothing', async (t) => {
    const other = await app.newTeam('Listing other');
    const r = await call(base, 'GET', `/api-keys?after=${newestFirst[0]}`, { token: other.token });
    t.equal(r.status, 200);
    t.notOk(r.body.data.some((k: KeyItem) => created.includes(k.id)));
  });
});

t.test('status filter', async (t) => {
  const owner = await app.newTeam('Statuses');
  const active = await createKey(owner.token, { name: 'active one' });
  const revoked = await createKey(owner.token, { name: 'revoked one' });
  const suspended = await createKey(owner.token, { name: 'suspended one' });
  t.equal((await call(base, 'DELETE', `/api-keys/${revoked.id}`, { token: owner.token })).status, 200);
  sqlite.prepare("update api_keys set status = 'suspended' where id = ?").run(suspended.id);

  const ids = (items: KeyItem[]) => items.map((k) => k.id).sort();
  const byDefault = await listAll(owner.token);
  t.same(ids(byDefault), [owner.keyId, active.id, suspended.id].sort(), 'default is active, suspended included');
  t.equal(byDefault.find((k) => k.id === suspended.id)?.status, 'suspended');
  t.same(ids(await listAll(owner.token, 'status=active')), ids(byDefault));
  const onlyRevoked = await listAll(owner.token, 'status=revoked');
  t.same(ids(onlyRevoked), [revoked.id]);
  t.equal(onlyRevoked[0]?.status, 'revoked');
  t.same(ids(await listAll(owner.token, 'status=all')), [owner.keyId, active.id, revoked.id, suspended.id].sort());
  for (const bad of ['suspended', 'ACTIVE', 'deleted', '']) {
    const r = await call(base, 'GET', `/api-keys?status=${bad}`, { token: owner.token });
    t.equal(r.status, 422, `status=${bad}`);
    t.equal(r.body.name, 'invalid_parameter');
  }
});

t.test('search and the other filters', async (t) => {
  const owner = await app.newTeam('Searching');
  const names = ['100% done', '100 percent', 'a_b', 'axb', 'Alpha Key', 'second ALPHA', 'back\\slash', 'Émile ÄRGER'];
  const byName: Record<string, string> = {};
  for (const name of names) byName[name] = (await createKey(owner.token, { name })).id;
  const sender = await createKey(owner.token, { name: 'alpha sender', permission: 'sending_access' });
  const found = async (search: string, extra = '') => {
    const r = await call(base, 'GET', `/api-keys?limit=100&search=${encodeURIComponent(search)}${extra}`, { token: owner.token });
    t.equal(r.status, 200, `search ${search}`);
    return (r.body.data as KeyItem[]).map((k) => k.name).sort();
  };

  t.same(await found('_'), ['a_b'], '_ is literal');
  t.same(await found('a_b'), ['a_b']);
  t.same(await found('%'), ['100% done'], '% is literal');
  t.same(await found('0%'), ['100% done']);
  t.same(await found('\\'), ['back\\slash'], 'a backslash is literal');
  t.same(await found('alpha'), ['Alpha Key', 'alpha sender', 'second ALPHA'].sort(), 'case-insensitive');
  t.same(await found('ALPHA'), ['Alpha Key', 'alpha sender', 'second ALPHA'].sort());
  t.same(await found('nothing like this'), []);
  t.same(await found('émile'), ['Émile ÄRGER'], 'case-insensitive beyond ASCII');
  t.same(await found('ärger'), ['Émile ÄRGER']);
  t.same(await found('MILE Ä'), ['Émile ÄRGER']);
  t.same(await found('alpha', '&permission=sending_access'), ['alpha sender'], 'combined with permission');
  t.same(await found('alpha', '&permission=full_access'), ['Alpha Key', 'second ALPHA'].sort());
  t.same(await found('alpha', '&inbox_access=none'), ['Alpha Key', 'alpha sender', 'second ALPHA'].sort());
  t.same(await found('alpha', '&inbox_access=read'), []);
  t.same(await found('s'.repeat(200)), [], '200 characters is allowed');
  t.ok(sender.id);

  for (const qs of ['search=', 'search=%20%20', `search=${'s'.repeat(201)}`, 'permission=admin', 'permission=', 'inbox_access=all']) {
    const r = await call(base, 'GET', `/api-keys?${qs}`, { token: owner.token });
    t.equal(r.status, 422, qs.slice(0, 40));
    t.equal(r.body.name, 'invalid_parameter', qs.slice(0, 40));
  }
});

t.test('rename', async (t) => {
  const owner = await app.newTeam('Renaming');
  const other = await app.newTeam('Renaming other');
  const key = await createKey(owner.token, { name: 'before' });
  const nameOf = async (token: string, id: string) => (await listAll(token, 'status=all')).find((k) => k.id === id)?.name;

  const r = await call(base, 'PATCH', `/api-keys/${key.id}`, { token: owner.token, body: { name: 'after' } });
  t.equal(r.status, 200);
  t.same(r.body, { object: 'api_key', id: key.id });
  t.equal(await nameOf(owner.token, key.id), 'after');

  const same = await call(base, 'PATCH', `/api-keys/${key.id}`, { token: owner.token, body: { id: key.id, name: 'with id' } });
  t.equal(same.status, 200, 'an id equal to the path id is accepted');
  t.equal(await nameOf(owner.token, key.id), 'with id');

  const otherKey = await createKey(owner.token, { name: 'untouched' });
  const differs = await call(base, 'PATCH', `/api-keys/${key.id}`, { token: owner.token, body: { id: otherKey.id, name: 'nope' } });
  t.ok(differs.status === 400 || differs.status === 422, `a different id is refused (${differs.status})`);
  t.equal(differs.body.name, 'validation_error');
  t.equal(await nameOf(owner.token, key.id), 'with id');
  t.equal(await nameOf(owner.token, otherKey.id), 'untouched');

  const missing = await call(base, 'PATCH', `/api-keys/${key.id}`, { token: owner.token, body: {} });
  t.equal(missing.status, 422);
  t.equal(missing.body.name, 'missing_required_field');
  const long = await call(base, 'PATCH', `/api-keys/${key.id}`, { token: owner.token, body: { name: 'x'.repeat(256) } });
  t.equal(long.status, 422);
  t.equal(long.body.name, 'validation_error');
  const extra = await call(base, 'PATCH', `/api-keys/${key.id}`, { token: owner.token, body: { name: 'x', permission: 'sending_access' } });
  t.equal(extra.status, 400, 'permission cannot be changed by rename');
  t.equal(extra.body.name, 'validation_error');

  const unknown = await call(base, 'PATCH', `/api-keys/${crypto.randomUUID()}`, { token: owner.token, body: { name: 'ghost' } });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.name, 'not_found');

  const foreign = await call(base, 'PATCH', `/api-keys/${key.id}`, { token: other.token, body: { name: 'hijacked' } });
  t.equal(foreign.status, 404, 'another team\'s key is not found');
  t.equal(foreign.body.name, 'not_found');
  t.equal(await nameOf(owner.token, key.id), 'with id', 'and not renamed');
});

t.test('revoke', async (t) => {
  const owner = await app.newTeam('Revoking');
  const other = await app.newTeam('Revoking other');
  const victim = await createKey(owner.token, { name: 'to revoke' });
  t.equal((await call(base, 'GET', '/api-keys', { token: victim.token })).status, 200, 'works before');

  const r = await call(base, 'DELETE', `/api-keys/${victim.id}`, { token: owner.token });
  t.equal(r.status, 200);
  t.same(r.body, { object: 'api_key', id: victim.id, deleted: true });

  const after = await call(base, 'GET', '/api-keys', { token: victim.token });
  t.equal(after.status, 403, 'the very next request is refused');
  t.equal(after.body.name, 'restricted_api_key');
  const send = await call(base, 'POST', '/api-keys', { token: victim.token, body: { name: 'x' } });
  t.equal(send.status, 403);
  t.equal(send.body.name, 'restricted_api_key');

  const row = sqlite.prepare('select status, revoked_at from api_keys where id = ?').get(victim.id) as { status: string; revoked_at: string | null };
  t.equal(row.status, 'revoked', 'the row is kept');
  t.match(row.revoked_at, /^\d{4}-\d\d-\d\dT/);
  t.ok((await listAll(owner.token, 'status=revoked')).some((k) => k.id === victim.id && k.status === 'revoked'));
  t.notOk((await listAll(owner.token)).some((k) => k.id === victim.id), 'not among active keys');

  const unknown = await call(base, 'DELETE', `/api-keys/${crypto.randomUUID()}`, { token: owner.token });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.name, 'not_found');

  const foreign = await call(base, 'DELETE', `/api-keys/${owner.keyId}`, { token: other.token });
  t.equal(foreign.status, 404, 'another team\'s key is not found');
  t.equal(foreign.body.name, 'not_found');
  t.equal((await call(base, 'GET', '/api-keys', { token: owner.token })).status, 200, 'and still works');

  const self = await createKey(owner.token, { name: 'self' });
  const own = await call(base, 'DELETE', `/api-keys/${self.id}`, { token: self.token });
  t.equal(own.status, 200, 'a key may revoke itself');
  t.equal((await call(base, 'GET', '/api-keys', { token: self.token })).body.name, 'restricted_api_key');
});

t.test('a sending_access key cannot manage keys: 401 restricted_api_key', async (t) => {
  const owner = await app.newTeam('Restricted');
  const sender = await createKey(owner.token, { name: 'sender', permission: 'sending_access' });
  for (const [method, path, body] of [
    ['GET', '/api-keys', undefined],
    ['POST', '/api-keys', { name: 'x' }],
    ['PATCH', `/api-keys/${owner.keyId}`, { name: 'x' }],
    ['DELETE', `/api-keys/${owner.keyId}`, undefined],
  ] as const) {
    const r = await call(base, method, path, { token: sender.token, body });
    t.equal(r.status, 401, `${method} ${path}`);
    t.equal(r.body.name, 'restricted_api_key');
  }
  t.equal((await listAll(owner.token)).find((k) => k.id === owner.keyId)?.name, 'Restricted key', 'nothing renamed');
  t.equal((await call(base, 'GET', '/api-keys', { token: owner.token })).status, 200, 'nothing revoked');
});

t.test('a suspended team\'s keys are 403 suspended_api_key', async (t) => {
  const owner = await app.newTeam('Suspended team');
  const sender = await createKey(owner.token, { name: 'sender', permission: 'sending_access' });
  await app.appliance.services.api.foundation.teams.setStatus(owner.teamId, 'suspended');
  for (const token of [owner.token, sender.token]) {
    const r = await call(base, 'GET', '/api-keys', { token });
    t.equal(r.status, 403);
    t.equal(r.body.name, 'suspended_api_key');
  }
  await app.appliance.services.api.foundation.teams.setStatus(owner.teamId, 'active');
  t.equal((await call(base, 'GET', '/api-keys', { token: owner.token })).status, 200, 'works again once the team is active');
});

t.test('a suspended key is 403 suspended_api_key; its teammates are unaffected', async (t) => {
  const owner = await app.newTeam('Suspended key');
  const key = await createKey(owner.token, { name: 'to suspend' });
  t.equal((await call(base, 'GET', '/api-keys', { token: key.token })).status, 200, 'used (and so remembered) before');
  sqlite.prepare("update api_keys set status = 'suspended' where id = ?").run(key.id);
  const r = await call(base, 'GET', '/api-keys', { token: key.token });
  t.equal(r.status, 403);
  t.equal(r.body.name, 'suspended_api_key');
  t.equal((await call(base, 'GET', '/api-keys', { token: owner.token })).status, 200);
});

t.test('a change made by another connection (another process, svc admin) counts on the next request', async (t) => {
  const owner = await app.newTeam('Other connection');
  const key = await createKey(owner.token, { name: 'revoked elsewhere' });
  for (let i = 0; i < 3; i++) t.equal((await call(base, 'GET', '/api-keys', { token: key.token })).status, 200, 'works (and is remembered)');
  const elsewhere = new BetterSqlite3(sqlite.name);
  t.teardown(() => elsewhere.close());
  elsewhere.pragma('busy_timeout = 5000');
  elsewhere.prepare("update api_keys set status = 'revoked' where id = ?").run(key.id);
  const r = await call(base, 'GET', '/api-keys', { token: key.token });
  t.equal(r.status, 403, 'the very next request is refused');
  t.equal(r.body.name, 'restricted_api_key');
  elsewhere.prepare("update teams set status = 'suspended' where id = ?").run(owner.teamId);
  t.equal((await call(base, 'GET', '/api-keys', { token: owner.token })).body.name, 'suspended_api_key', 'a team suspended elsewhere too');
  elsewhere.prepare("update teams set status = 'active' where id = ?").run(owner.teamId);
  t.equal((await call(base, 'GET', '/api-keys', { token: owner.token })).status, 200, 'and back');
});

t.test('last_used_at is set once a key is used', async (t) => {
  const owner = await app.newTeam('Last used');
  const key = await createKey(owner.token, { name: 'fresh' });
  await app.appliance.services.api.logWriter.flush();
  const before = (await listAll(owner.token)).find((k) => k.id === key.id);
  t.equal(before?.last_used_at, null, 'never used yet');
  const started = new Date().toISOString();
  t.equal((await call(base, 'GET', '/api-keys?limit=1', { token: key.token })).status, 200);
  await app.appliance.services.api.logWriter.flush();
  const listed = await listAll(owner.token);
  const after = listed.find((k) => k.id === key.id);
  t.match(after?.last_used_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  t.ok(after!.last_used_at! >= after!.created_at, 'not before the key existed');
  t.ok(after!.last_used_at! >= started.slice(0, 19), 'from this request');
  const creator = listed.find((k) => k.id === owner.keyId);
  t.ok(creator?.last_used_at, 'the creating key is marked used too');
});
