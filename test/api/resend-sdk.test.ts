import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';

// The hosted-email SDK, unchanged, pointed at svc: only the base URL and the key differ.
const app = await startTestAppliance({ env: { SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
t.teardown(() => app.stop());
const baseUrl = app.baseUrl;
const team = await app.newTeam('SDK');
const resend = new Resend(team.token, { baseUrl });
const flush = () => app.appliance.services.api.logWriter.flush();

t.test('the SDK identifies itself as resend-node', async (t) => {
  t.match(resend.userAgent, /^resend-node:\d+\.\d+\.\d+/);
  t.equal(resend.baseUrl, baseUrl);
});

t.test('apiKeys: create, list, update, remove', async (t) => {
  const created = await resend.apiKeys.create({ name: 'made by the SDK' });
  t.equal(created.error, null);
  t.match(created.data?.id, /^[0-9a-f-]{36}$/);
  t.match(created.data?.token, /^svc_/);
  const id = created.data!.id;

  const sending = await resend.apiKeys.create({ name: 'sender from SDK', permission: 'sending_access' });
  t.equal(sending.error, null);

  const listed = await resend.apiKeys.list();
  t.equal(listed.error, null);
  t.equal(listed.data?.object, 'list');
  t.equal(listed.data?.has_more, false);
  const item = listed.data?.data.find((k) => k.id === id);
  t.ok(item, 'the new key is listed');
  t.equal(item?.name, 'made by the SDK');
  t.notOk(item && 'token' in item, 'no token in the list');
  t.equal(listed.data?.data[0]?.id, sending.data?.id, 'newest first');
  t.equal(listed.headers?.['ratelimit-limit'], '100000', 'rate headers reach the SDK');

  const page = await resend.apiKeys.list({ limit: 1 });
  t.equal(page.data?.data.length, 1);
  t.equal(page.data?.has_more, true);
  const next = await resend.apiKeys.list({ limit: 1, after: page.data!.data[0]!.id });
  t.equal(next.data?.data[0]?.id, id, 'the after cursor from the SDK');

  const updated = await resend.apiKeys.update(id, { name: 'renamed by the SDK' });
  t.equal(updated.error, null);
  t.same(updated.data, { object: 'api_key', id });
  const relisted = await resend.apiKeys.list();
  t.equal(relisted.data?.data.find((k) => k.id === id)?.name, 'renamed by the SDK');

  // The new token works through the SDK too, until it is removed.
  const second = new Resend(created.data!.token, { baseUrl });
  t.equal((await second.apiKeys.list()).error, null);
  const removed = await resend.apiKeys.remove(id);
  t.equal(removed.error, null);
  t.same(removed.data, { object: 'api_key', id, deleted: true });
  const refused = await second.apiKeys.list();
  t.equal(refused.data, null);
  t.match(refused.error, { name: 'restricted_api_key', statusCode: 403 });
  const afterRemove = await resend.apiKeys.list();
  t.notOk(afterRemove.data?.data.some((k) => k.id === id), 'no longer among active keys');

  const sender = new Resend(sending.data!.token, { baseUrl });
  const restricted = await sender.apiKeys.list();
  t.match(restricted.error, { name: 'restricted_api_key', statusCode: 401 });
});

t.test('errors reach the SDK as the spec body', async (t) => {
  const invalid = await new Resend('re_123', { baseUrl }).apiKeys.list();
  t.equal(invalid.data, null);
  t.equal(invalid.error?.name, 'invalid_api_key');
  t.equal(invalid.error?.statusCode, 401);
  const forged = await new Resend(`${team.token.slice(0, -4)}AAAA`, { baseUrl }).apiKeys.create({ name: 'x' });
  t.equal(forged.error?.name, 'invalid_api_key');

  const blank = await resend.apiKeys.create({ name: ' ' });
  t.match(blank.error, { name: 'validation_error', statusCode: 422 });
  const missing = await resend.apiKeys.create({} as { name: string });
  t.match(missing.error, { name: 'missing_required_field', statusCode: 422 });
  const pinned = await resend.apiKeys.create({ name: 'pinned', domain_id: crypto.randomUUID() });
  t.match(pinned.error, { name: 'validation_error', statusCode: 422 });
  const unknown = await resend.apiKeys.remove(crypto.randomUUID());
  t.match(unknown.error, { name: 'not_found', statusCode: 404 });
});

t.test('RESEND_BASE_URL points the SDK at svc without code changes', async (t) => {
  const saved = process.env.RESEND_BASE_URL;
  process.env.RESEND_BASE_URL = baseUrl;
  t.teardown(() => {
    if (saved === undefined) delete process.env.RESEND_BASE_URL;
    else process.env.RESEND_BASE_URL = saved;
  });
  const fromEnv = new Resend(team.token);
  t.equal(fromEnv.baseUrl, baseUrl);
  const listed = await fromEnv.apiKeys.list({ limit: 1 });
  t.equal(listed.error, null);
  t.equal(listed.data?.object, 'list');
});

t.test('logs through the SDK, and the SDK\'s calls are logged as sdk:node', async (t) => {
  await flush();
  const list = await resend.logs.list({ limit: 100 });
  t.equal(list.error, null);
  t.equal(list.data?.object, 'list');
  const logs = list.data!.data as Array<{ id: string; endpoint: string; method: string; response_status: number; user_agent: string | null; source?: string }>;
  for (const [method, endpoint, status] of [['POST', '/api-keys', 201], ['GET', '/api-keys', 200], ['PATCH', null, 200], ['DELETE', null, 200]] as const) {
    const found = logs.find((l) => l.method === method && (endpoint === null || l.endpoint === endpoint) && l.response_status === status);
    t.ok(found, `${method} ${endpoint ?? '/api-keys/{id}'} is logged`);
    t.equal(found?.user_agent, resend.userAgent);
    t.equal(found?.source, 'sdk:node');
  }
  const sdkOnly = await call(baseUrl, 'GET', `/logs?limit=100&source=sdk:node`, { token: team.token });
  t.equal(sdkOnly.status, 200);
  t.ok(sdkOnly.body.data.length >= 10);
  t.ok(sdkOnly.body.data.every((l: { user_agent: string }) => l.user_agent.startsWith('resend-node:')));

  const createLog = logs.find((l) => l.method === 'POST' && l.response_status === 201)!;
  const one = await resend.logs.get(createLog.id);
  t.equal(one.error, null);
  t.equal(one.data?.object, 'log');
  t.equal(one.data?.id, createLog.id);
  t.ok(one.data?.request_body, 'the request body is kept');
  t.equal(one.data?.response_body, null, 'the answer with the token is not');
});
