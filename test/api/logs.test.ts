import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call, type CallResult } from '../helpers/http.js';

// A roomy bucket: this file checks the request log, not the rate limit.
const app = await startTestAppliance({ env: { SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
t.teardown(() => app.stop());
const base = app.baseUrl;
const sqlite = app.appliance.services.database.sqlite;
const flush = () => app.appliance.services.api.logWriter.flush();
const isoInstant = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const PLAIN_UA = 'curl/8.5.0';
const SDK_UA = 'resend-node:6.38.0';
// The reads of /logs made by this file use their own User-Agent, so they are easy to tell apart.
const READER_UA = 'log-reader/1.0';

interface LogItem {
  object: string; id: string; created_at: string; endpoint: string; method: string; response_status: number;
  user_agent: string | null; source: string; request_id: string; latency_ms: number; api_key_id: string | null;
}

async function readLogs(token: string, qs = ''): Promise<CallResult> {
  return call(base, 'GET', `/logs${qs ? `?${qs}` : ''}`, { token, headers: { 'user-agent': READER_UA } });
}

async function logsOf(token: string, qs = ''): Promise<LogItem[]> {
  await flush();
  const r = await readLogs(token, `limit=100${qs ? `&${qs}` : ''}`);
  if (r.status !== 200) throw new Error(`GET /logs: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

const withUa = (ua: string) => ({ 'user-agent': ua });

t.test('every authenticated request is logged with its details', async (t) => {
  const team = await app.newTeam('Logged');
  const plain = await call(base, 'GET', '/api-keys?limit=2', { token: team.token, headers: withUa(PLAIN_UA) });
  const sdk = await call(base, 'GET', '/api-keys', { token: team.token, headers: withUa(SDK_UA) });
  const unknownId = crypto.randomUUID();
  const missing = await call(base, 'PATCH', `/api-keys/${unknownId}`, { token: team.token, body: { name: 'x' }, headers: withUa(PLAIN_UA) });
  const prefixed = await call(base, 'GET', '/api/v1/api-keys', { token: team.token, headers: withUa(PLAIN_UA) });
  t.same([plain.status, sdk.status, missing.status, prefixed.status], [200, 200, 404, 200]);

  const logs = await logsOf(team.token);
  const byRequest = (r: CallResult) => {
    const id = r.headers.get('x-request-id');
    t.ok(id, 'the answer carries x-request-id');
    return logs.filter((l) => l.request_id === id);
  };

  const [p] = byRequest(plain);
  t.ok(p, 'the plain request is logged once');
  t.equal(byRequest(plain).length, 1);
  t.match(p, {
    object: 'log', method: 'GET', endpoint: '/api-keys', response_status: 200, user_agent: PLAIN_UA,
    source: 'api', request_id: plain.headers.get('x-request-id'), api_key_id: team.keyId,
  });
  t.match(p!.id, /^[0-9a-f-]{36}$/);
  t.match(p!.created_at, isoInstant);
  t.ok(Number.isInteger(p!.latency_ms) && p!.latency_ms >= 0, 'latency_ms is a whole number');
  t.type(p!.response_status, 'number');

  const [s] = byRequest(sdk);
  t.match(s, { method: 'GET', endpoint: '/api-keys', response_status: 200, user_agent: SDK_UA, source: 'sdk:node', api_key_id: team.keyId });

  const [m] = byRequest(missing);
  t.match(m, { method: 'PATCH', endpoint: `/api-keys/${unknownId}`, response_status: 404, source: 'api' }, 'failures are logged too, with the requested path');

  const [v] = byRequest(prefixed);
  t.match(v, { endpoint: '/api/v1/api-keys', response_status: 200 }, 'the path as requested');

  const newestFirst = logs.map((l) => l.id);
  t.same(newestFirst, [...newestFirst].sort().reverse(), 'newest first');
});

t.test('unauthenticated and refused-credential requests are not logged', async (t) => {
  const team = await app.newTeam('Unlogged');
  const revoked = (await call(base, 'POST', '/api-keys', { token: team.token, body: { name: 'to revoke' } })).body;
  await call(base, 'DELETE', `/api-keys/${revoked.id}`, { token: team.token });
  await flush();
  const count = () => (sqlite.prepare('select count(*) as n from request_logs').get() as { n: number }).n;
  const before = count();
  const probe = { 'user-agent': 'unauth-probe/1.0' };
  const answers = await Promise.all([
    call(base, 'GET', '/api-keys', { headers: probe }),
    call(base, 'GET', '/api-keys', { token: 'svc_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', headers: probe }),
    call(base, 'GET', '/api-keys', { token: revoked.token, headers: probe }),
    call(base, 'GET', '/health', { headers: probe }),
    call(base, 'GET', '/no-such-route', { token: team.token, headers: probe }),
  ]);
  t.same(answers.map((a) => a.status), [401, 401, 403, 200, 404]);
  await flush();
  t.equal(count(), before, 'no row was written');
  t.equal((sqlite.prepare("select count(*) as n from request_logs where user_agent = 'unauth-probe/1.0'").get() as { n: number }).n, 0);
});

t.test('list filters', async (t) => {
  const team = await app.newTeam('Filtered');
  const other = await app.newTeam('Filtered other');
  const startedAt = new Date(Date.now() - 1000).toISOString();
  const seedUa = 'seed-client/2.0';
  const seed = async (method: string, path: string, ua: string, body?: unknown) =>
    call(base, method, path, { token: team.token, body, headers: withUa(ua) });
  const r1 = await seed('GET', '/api-keys', seedUa);
  const r2 = await seed('GET', '/api-keys?limit=1', SDK_UA);
  const r3 = await seed('PATCH', `/api-keys/${crypto.randomUUID()}`, seedUa, { name: 'ghost' });
  const r4 = await seed('PATCH', `/api-keys/${team.keyId}`, seedUa, { name: 'renamed' });
  const r5 = await seed('GET', '/api-keys?limit=0', seedUa);
  const r6 = await seed('GET', '/api-keys?status=all', seedUa);
  t.same([r1, r2, r3, r4, r5, r6].map((r) => r.status), [200, 200, 404, 200, 422, 200]);
  const rid = (r: CallResult) => r.headers.get('x-request-id');
  const ridsOf = (items: LogItem[]) => items.map((l) => l.request_id).sort();
  const expect = (...rs: CallResult[]) => rs.map(rid).sort();
  // Other team's traffic that would match every filter below.
  await call(base, 'PATCH', `/api-keys/${other.keyId}`, { token: other.token, body: { name: 'other' }, headers: withUa(seedUa) });
  await call(base, 'GET', '/api-keys', { token: other.token, headers: withUa(SDK_UA) });
  const afterSeed = new Date(Date.now() + 1000).toISOString();

  t.test('status', async (t) => {
    t.same(ridsOf(await logsOf(team.token, 'status=404')), expect(r3));
    t.same(ridsOf(await logsOf(team.token, 'status=422')), expect(r5));
    t.ok((await logsOf(team.token, 'status=200')).every((l) => l.response_status === 200));
    for (const bad of ['abc', '99', '600', '']) {
      const r = await readLogs(team.token, `status=${bad}`);
      t.equal(r.status, 422, `status=${bad}`);
      t.equal(r.body.name, 'invalid_parameter');
    }
  });

  t.test('source and exclude_source', async (t) => {
    t.same(ridsOf(await logsOf(team.token, 'source=sdk:node')), expect(r2), 'only the SDK request');
    const api = await logsOf(team.token, 'source=api');
    t.ok(api.length >= 5);
    t.ok(api.every((l) => l.source === 'api'));
    const notSdk = await logsOf(team.token, 'exclude_source=sdk:node');
    t.notOk(notSdk.some((l) => l.source === 'sdk:node'));
    t.ok(notSdk.some((l) => l.request_id === rid(r1)));
    t.notOk(notSdk.some((l) => l.request_id === rid(r2)));
    t.same(await logsOf(team.token, 'source=dashboard'), []);
  });

  t.test('user_agent is an exact match', async (t) => {
    t.same(ridsOf(await logsOf(team.token, `user_agent=${encodeURIComponent(seedUa)}`)), expect(r1, r3, r4, r5, r6));
    t.same(await logsOf(team.token, 'user_agent=seed-client'), [], 'a prefix is not enough');
    t.same(await logsOf(team.token, `user_agent=${encodeURIComponent(seedUa.toUpperCase())}`), []);
  });

  t.test('search finds an id named in the requested path', async (t) => {
    const found = await logsOf(team.token, `search=${team.keyId}`);
    t.same(ridsOf(found), expect(r4));
    t.equal(found[0]?.endpoint, `/api-keys/${team.keyId}`);
    t.equal(found[0]?.method, 'PATCH');
    t.same(ridsOf(await logsOf(team.token, `search=${team.keyId.toUpperCase()}`)), expect(r4), 'case-insensitive');
    t.same(await logsOf(team.token, `search=${other.keyId}`), [], 'not another team\'s request');
    const bySegment = await logsOf(team.token, 'search=api-keys');
    t.ok(bySegment.length >= 6);
    t.same(await logsOf(team.token, 'search=%25'), [], '% is literal');
    for (const bad of ['', '%20%20', 'x'.repeat(201)]) {
      const r = await readLogs(team.token, `search=${bad}`);
      t.equal(r.status, 422, `search of ${bad.length} characters`);
      t.equal(r.body.name, 'invalid_parameter');
    }
  });

  t.test('start_date and end_date', async (t) => {
    const window = `start_date=${encodeURIComponent(startedAt)}&end_date=${encodeURIComponent(afterSeed)}&user_agent=${seedUa}`;
    t.same(ridsOf(await logsOf(team.token, window)), expect(r1, r3, r4, r5, r6));
    // Only the seed's requests: this file's own log reads go on being logged, past afterSeed on a slow machine.
    t.same(await logsOf(team.token, `start_date=${encodeURIComponent(afterSeed)}&user_agent=${seedUa}`), [], 'nothing after the future');
    t.same(await logsOf(team.token, `end_date=${encodeURIComponent(startedAt)}`), [], 'nothing before the seed');
    t.same(ridsOf(await logsOf(team.token, `start_date=2020-01-01T00:00:00%2B02:00&user_agent=${seedUa}`)), expect(r1, r3, r4, r5, r6), 'an offset is accepted');
    for (const qs of ['start_date=2026-01-01', 'end_date=2026-01-31', 'start_date=yesterday', 'end_date=2026-13-01T00:00:00Z',
      `start_date=${encodeURIComponent(afterSeed)}&end_date=${encodeURIComponent(startedAt)}`]) {
      const r = await readLogs(team.token, qs);
      t.equal(r.status, 422, qs);
      t.equal(r.body.name, 'invalid_parameter', qs);
    }
  });

  t.test('limit, after and before', async (t) => {
    const filter = `user_agent=${seedUa}`;
    const all = await logsOf(team.token, filter);
    t.equal(all.length, 5);
    await flush();
    const first = await readLogs(team.token, `${filter}&limit=2`);
    t.equal(first.status, 200);
    t.equal(first.body.object, 'list');
    t.equal(first.body.has_more, true);
    t.same(first.body.data.map((l: LogItem) => l.id), all.slice(0, 2).map((l) => l.id));
    const second = await readLogs(team.token, `${filter}&limit=2&after=${all[1]!.id}`);
    t.same(second.body.data.map((l: LogItem) => l.id), all.slice(2, 4).map((l) => l.id));
    t.equal(second.body.has_more, true);
    const last = await readLogs(team.token, `${filter}&limit=2&after=${all[3]!.id}`);
    t.same(last.body.data.map((l: LogItem) => l.id), [all[4]!.id]);
    t.equal(last.body.has_more, false);
    const back = await readLogs(team.token, `${filter}&limit=2&before=${all[2]!.id}`);
    t.same(back.body.data.map((l: LogItem) => l.id), all.slice(0, 2).map((l) => l.id));
    t.equal(back.body.has_more, false);
    for (const qs of ['limit=0', 'limit=101', 'after=nope', `after=${all[0]!.id}&before=${all[1]!.id}`]) {
      const r = await readLogs(team.token, qs);
      t.equal(r.status, 422, qs);
      t.equal(r.body.name, 'invalid_parameter');
    }
    const defaults = await readLogs(team.token);
    t.ok(defaults.body.data.length <= 20, 'default limit 20');
  });

  t.test('another team sees none of these', async (t) => {
    const theirs = await logsOf(other.token);
    const ours = new Set(expect(r1, r2, r3, r4, r5, r6));
    t.notOk(theirs.some((l) => ours.has(l.request_id)));
    t.ok(theirs.every((l) => l.api_key_id === other.keyId));
  });
});

t.test('one log with its bodies', async (t) => {
  const team = await app.newTeam('Bodies');
  const other = await app.newTeam('Bodies other');
  const created = await call(base, 'POST', '/api-keys', { token: team.token, body: { name: 'from logs' } });
  t.equal(created.status, 201);
  const renamed = await call(base, 'PATCH', `/api-keys/${created.body.id}`, { token: team.token, body: { name: 'renamed in logs' } });
  t.equal(renamed.status, 200);
  const logs = await logsOf(team.token);
  const find = (r: CallResult) => logs.find((l) => l.request_id === r.headers.get('x-request-id'))!;

  const createLog = await call(base, 'GET', `/logs/${find(created).id}`, { token: team.token });
  t.equal(createLog.status, 200);
  t.match(createLog.body, { object: 'log', id: find(created).id, method: 'POST', endpoint: '/api-keys', response_status: 201, api_key_id: team.keyId });
  t.same(createLog.body.request_body, { name: 'from logs' }, 'the create request body is kept');
  t.equal(createLog.body.response_body, null, 'the create answer holds the token: dropped whole');
  t.notMatch(JSON.stringify(createLog.body), created.body.token);

  const renameLog = await call(base, 'GET', `/logs/${find(renamed).id}`, { token: team.token });
  t.equal(renameLog.status, 200);
  t.match(renameLog.body, { method: 'PATCH', endpoint: `/api-keys/${created.body.id}`, response_status: 200 });
  t.same(renameLog.body.request_body, { name: 'renamed in logs' }, 'the rename body is kept');
  t.same(renameLog.body.response_body, { object: 'api_key', id: created.body.id });

  const secret = created.body.token.split('_').slice(2).join('_');
  const stored = JSON.stringify(sqlite.prepare('select * from request_logs').all());
  t.notOk(stored.includes(secret), 'no token secret anywhere in request_logs');

  const foreign = await call(base, 'GET', `/logs/${find(created).id}`, { token: other.token });
  t.equal(foreign.status, 404, 'another team\'s log');
  t.equal(foreign.body.name, 'not_found');
  for (const id of [crypto.randomUUID(), 'not-an-id']) {
    const r = await call(base, 'GET', `/logs/${id}`, { token: team.token });
    t.equal(r.status, 404, id);
    t.equal(r.body.name, 'not_found');
  }
});

t.test('logs need a full_access key', async (t) => {
  const team = await app.newTeam('Log access');
  const sender = (await call(base, 'POST', '/api-keys', { token: team.token, body: { name: 's', permission: 'sending_access' } })).body;
  const revoked = (await call(base, 'POST', '/api-keys', { token: team.token, body: { name: 'r' } })).body;
  await call(base, 'DELETE', `/api-keys/${revoked.id}`, { token: team.token });
  const someLog = (await logsOf(team.token))[0]!;
  for (const path of ['/logs', `/logs/${someLog.id}`]) {
    const restricted = await call(base, 'GET', path, { token: sender.token });
    t.equal(restricted.status, 401, `sending_access on ${path}`);
    t.equal(restricted.body.name, 'restricted_api_key');
    const gone = await call(base, 'GET', path, { token: revoked.token });
    t.equal(gone.status, 403, `revoked on ${path}`);
    t.equal(gone.body.name, 'restricted_api_key');
  }
});

t.test('reading the logs is itself logged', async (t) => {
  const team = await app.newTeam('Reader');
  const read = await call(base, 'GET', '/logs?limit=5', { token: team.token, headers: withUa('only-reader/3.1') });
  t.equal(read.status, 200);
  const logs = await logsOf(team.token, 'user_agent=only-reader/3.1');
  t.equal(logs.length, 1);
  t.match(logs[0], { method: 'GET', endpoint: '/logs', response_status: 200, request_id: read.headers.get('x-request-id'), api_key_id: team.keyId });
  const detail = await call(base, 'GET', `/logs/${logs[0]!.id}`, { token: team.token, headers: withUa('detail-reader/1.0') });
  t.equal(detail.status, 200);
  const detailLogs = await logsOf(team.token, 'user_agent=detail-reader/1.0');
  t.match(detailLogs, [{ method: 'GET', endpoint: `/logs/${logs[0]!.id}`, response_status: 200 }]);
});
