import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { httpApp } from '../../api/app.js';
import { listenTcp } from '../../api/server.js';

// A roomy bucket: this file checks the contract's refusals, not the rate limit (rate-limit.test.ts does).
const app = await startTestAppliance({ env: { SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
t.teardown(() => app.stop());
const { token } = await app.newTeam('Contract');
const base = app.baseUrl;

t.test('missing or non-Bearer Authorization is 401 missing_api_key', async (t) => {
  for (const headers of [{}, { authorization: `Basic ${token}` }] as Record<string, string>[]) {
    const r = await call(base, 'GET', '/api-keys', { headers });
    t.equal(r.status, 401);
    t.equal(r.body.name, 'missing_api_key');
    t.equal(r.body.statusCode, 401);
    t.type(r.body.message, 'string');
  }
});

t.test('unknown or malformed token is 401 invalid_api_key', async (t) => {
  const forged = token.slice(0, -4) + 'AAAA';
  for (const bad of ['svc_nothing', forged, 're_123']) {
    const r = await call(base, 'GET', '/api-keys', { token: bad });
    t.equal(r.status, 401, bad);
    t.equal(r.body.name, 'invalid_api_key');
  }
});

t.test('missing User-Agent is 403 validation_error with code 1010', async (t) => {
  const r = await call(base, 'GET', '/api-keys', { token, noUserAgent: true });
  t.equal(r.status, 403);
  t.equal(r.body.name, 'validation_error');
  t.equal(r.body.code, 1010);
});

t.test('unknown route is 404 not_found; known path with wrong method is 405', async (t) => {
  const unknown = await call(base, 'GET', '/no-such-thing', { token });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.name, 'not_found');
  const wrong = await call(base, 'PUT', '/api-keys', { token, body: {} });
  t.equal(wrong.status, 405);
  t.equal(wrong.body.name, 'method_not_allowed');
  t.match(wrong.headers.get('allow'), /GET/);
});

t.test('unknown body fields are 400 validation_error, one errors[] item each', async (t) => {
  const r = await call(base, 'POST', '/api-keys', { token, body: { name: 'k', colour: 'red', size: 3 } });
  t.equal(r.status, 400);
  t.equal(r.body.name, 'validation_error');
  t.same(r.body.errors.map((e: { path: string }) => e.path).sort(), ['colour', 'size']);
});

t.test('malformed JSON is 400 validation_error', async (t) => {
  const r = await call(base, 'POST', '/api-keys', { token, raw: '{"name": ' });
  t.equal(r.status, 400);
  t.equal(r.body.name, 'validation_error');
});

t.test('an empty body with a JSON content type is no body', async (t) => {
  const r = await call(base, 'POST', '/api-keys', { token, raw: '' });
  t.equal(r.status, 422);
  t.equal(r.body.name, 'missing_required_field');
  t.match(r.body.errors, [{ path: 'name' }]);
});

t.test('a wrong field type is 400 validation_error naming the field', async (t) => {
  const r = await call(base, 'POST', '/api-keys', { token, body: { name: 'k', permission: 'root' } });
  t.equal(r.status, 400);
  t.equal(r.body.name, 'validation_error');
  t.match(r.body.errors, [{ path: 'permission' }]);
});

t.test('list parameters: limit outside 1-100 and after with before are 422 invalid_parameter', async (t) => {
  for (const qs of ['limit=0', 'limit=101', 'limit=abc', `after=${crypto.randomUUID()}&before=${crypto.randomUUID()}`, 'after=not-an-id']) {
    const r = await call(base, 'GET', `/api-keys?${qs}`, { token });
    t.equal(r.status, 422, qs);
    t.equal(r.body.name, 'invalid_parameter', qs);
  }
});

t.test('the same routes answer under /api/v1', async (t) => {
  const r = await call(base, 'GET', '/api/v1/api-keys', { token });
  t.equal(r.status, 200);
  t.equal(r.body.object, 'list');
});

t.test('JSON answers carry their type and length; HEAD gets the headers alone', async (t) => {
  const get = await fetch(`${base}/api-keys?limit=1`, { headers: { authorization: `Bearer ${token}`, 'user-agent': 'svc-tests/1.0' } });
  const text = await get.text();
  t.equal(get.headers.get('content-type'), 'application/json; charset=utf-8');
  t.equal(Number(get.headers.get('content-length')), Buffer.byteLength(text));
  t.equal(JSON.parse(text).object, 'list');
  const head = await fetch(`${base}/api-keys?limit=1`, { method: 'HEAD', headers: { authorization: `Bearer ${token}`, 'user-agent': 'svc-tests/1.0' } });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-type'), 'application/json; charset=utf-8');
  t.ok(head.headers.get('x-request-id'), 'the contract headers too');
  t.equal(await head.text(), '', 'no body');
});

t.test('a path parameter that is not valid percent-encoding is 400 validation_error', async (t) => {
  for (const prefix of ['', '/api/v1']) {
    const r = await call(base, 'DELETE', `${prefix}/api-keys/%E0%A4%A`, { token });
    t.equal(r.status, 400);
    t.equal(r.body.name, 'validation_error');
    t.match(r.body.message, /`id`/);
  }
  const encoded = await call(base, 'DELETE', `/api-keys/${encodeURIComponent('no such key')}`, { token });
  t.equal(encoded.status, 404, 'a well-encoded unknown id reaches the route and is not found');
});

t.test('an unexpected error is 500 application_error with the request id and no stack', async (t) => {
  const deps = app.appliance.services.api;
  const broken = { ...deps, foundation: { ...deps.foundation, apiKeys: { ...deps.foundation.apiKeys, list: async () => { throw new Error('boom at /secret/path.ts:12'); } } } };
  const server = await listenTcp(httpApp(broken), '127.0.0.1', 0);
  t.teardown(() => server.close());
  const r = await call(`http://127.0.0.1:${server.port}`, 'GET', '/api-keys', { token });
  t.equal(r.status, 500);
  t.equal(r.body.name, 'application_error');
  const requestId = r.headers.get('x-request-id');
  t.ok(requestId);
  t.match(r.body.message, requestId!);
  t.notMatch(JSON.stringify(r.body), /boom|secret|\.ts:/);
});

t.test('health and readiness need no key and follow the spec bodies', async (t) => {
  const health = await call(base, 'GET', '/health', { noUserAgent: true });
  t.equal(health.status, 200);
  t.same(health.body, { status: 'ok', version: 'test', env: 'production' });
  const ready = await call(base, 'GET', '/ready');
  t.equal(ready.status, 200);
  t.equal(ready.body.status, 'ok');
  t.same(ready.body.failed, []);
  t.same(ready.body.checks.map((c: { name: string }) => c.name), ['sqlite', 'redis', 'storage']);
  t.type(ready.body.checks[0].durationMs, 'number');
});

t.test('the OpenAPI document declares permission and scope on every operation', async (t) => {
  const r = await call(base, 'GET', '/openapi.json');
  t.equal(r.status, 200);
  t.equal(r.body.info.version, '1.0.0');
  let operations = 0;
  for (const [path, item] of Object.entries(r.body.paths as Record<string, Record<string, Record<string, unknown>>>)) {
    for (const [method, op] of Object.entries(item)) {
      operations++;
      t.ok('x-svc-permission' in op, `${method} ${path} has x-svc-permission`);
      t.ok('x-svc-scope' in op, `${method} ${path} has x-svc-scope`);
    }
  }
  t.ok(operations >= 6);
});
