import t from 'tap';
import { operationMatcher, type Match } from '../../api/operations.js';
import { openapiDocument } from '../../api/app.js';
import { recordRoutes } from '../../api/route-table.js';
import { RegisterRoutes } from '../../api/generated/routes.js';

// The matcher decides 404, 405 and each request's permission before anything else runs, from
// the same OpenAPI document the routes are generated from.
const match = operationMatcher(openapiDocument as never);

const template = (m: Match) => (m.kind === 'operation' ? `${m.operation.method} ${m.operation.template}` : m.kind);

t.test('a literal segment wins over a parameter in the same place', async (t) => {
  t.equal(template(match('POST', '/emails/batch')), 'POST /emails/batch');
  t.equal(template(match('GET', '/emails/receiving')), 'GET /emails/receiving');
  t.equal(template(match('GET', '/emails/metrics')), 'GET /emails/metrics');
  t.equal(template(match('GET', '/emails/0190aaaa-bbbb')), 'GET /emails/{email_id}');
  t.equal(template(match('POST', '/emails/0190aaaa-bbbb/cancel')), 'POST /emails/{email_id}/cancel');
  t.equal(template(match('POST', '/domains/claim')), 'POST /domains/claim');
  t.equal(template(match('GET', '/domains/d1/claim')), 'GET /domains/{id}/claim');
  t.equal(template(match('POST', '/suppressions/batch/add')), 'POST /suppressions/batch/add');
  t.equal(template(match('GET', '/webhooks/w1/messages/m1/attempts')), 'GET /webhooks/{id}/messages/{message_id}/attempts');
});

t.test('the match carries the path parameters, still percent-encoded, for the route', async (t) => {
  const m = match('GET', '/webhooks/w%201/messages/m1/attempts');
  t.same(m.kind === 'operation' && m.pathParams, { id: 'w%201', message_id: 'm1' });
  const literal = match('POST', '/emails/batch');
  t.same(literal.kind === 'operation' && literal.pathParams, {}, 'a literal path has none');
});

t.test('a known path with another method is 405 with the allowed methods', async (t) => {
  const m = match('PUT', '/api-keys');
  t.equal(m.kind, 'wrong_method');
  if (m.kind === 'wrong_method') t.same([...m.allowed].sort(), ['GET', 'POST']);
  const batch = match('GET', '/emails/batch');
  t.equal(batch.kind, 'wrong_method', 'the literal path is found even when only the parameter path has the method');
});

t.test('unknown paths, trailing slashes, HEAD and permissions', async (t) => {
  t.equal(match('GET', '/nope').kind, 'unknown');
  t.equal(match('GET', '/api-keys/a/b').kind, 'unknown', 'a parameter never spans a slash');
  t.equal(match('GET', '//api-keys').kind, 'unknown');
  t.equal(template(match('GET', '/api-keys/')), 'GET /api-keys');
  t.equal(template(match('HEAD', '/logs')), 'GET /logs');
  const send = match('POST', '/emails');
  t.equal(send.kind === 'operation' && send.operation.permission, 'sending_access');
  const health = match('GET', '/health');
  t.equal(health.kind === 'operation' && health.operation.permission, 'none');
});

t.test('every documented operation has a generated route in the route table', async (t) => {
  const routes = recordRoutes(RegisterRoutes);
  const document = openapiDocument as unknown as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
  t.ok(documented.length > 40, 'the document lists the operations');
  t.same(documented.filter((key) => !routes.has(key)), [], 'no operation without its route');
  t.equal(routes.size, documented.length, 'no route without its operation');
});
