import t from 'tap';
import { adminCall } from '../../bin/admin-client.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { eventsOf, mailZone } from '../helpers/email-fixtures.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// The HTTP contract end to end with SVC_DATABASE_URL naming a fresh PostgreSQL database: keys
// made over the admin path and the API, errors, request logs, and a send delivered to a fake MX.
const pg = await createTestDatabase();
const dns = await mailZone();
const mx = await startFakeMx();
const app = await startTestAppliance({
  databaseUrl: pg.url, roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port) },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); await pg.drop(); });
const base = app.baseUrl;

t.test('the appliance runs on PostgreSQL and says so in /ready', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  t.equal(app.config.database_url, pg.url);
  const ready = await call(base, 'GET', '/ready');
  t.equal(ready.status, 200);
  t.equal(ready.body.status, 'ok');
  t.same(ready.body.checks.map((c: { name: string }) => c.name), ['postgres', 'redis', 'storage'], 'the database probe is named postgres');
});

t.test('keys: created over the admin path and the API, listed, refused after revocation', async (t) => {
  const team = await app.newTeam('Pg team');
  const created = await call(base, 'POST', '/api-keys', { token: team.token, body: { name: 'second key', permission: 'sending_access' } });
  t.equal(created.status, 201);
  t.match(created.body.token, /^svc_/);
  const listed = await call(base, 'GET', '/api-keys', { token: team.token });
  t.equal(listed.status, 200);
  t.same(listed.body.data.map((k: { name: string }) => k.name), ['second key', 'Pg team key'], 'newest first');
  const operatorList = await adminCall(app.adminSocket, 'GET', '/admin/api-keys');
  t.equal(operatorList.status, 200);
  t.ok((operatorList.body as { data: { id: string }[] }).data.some((k) => k.id === created.body.id), 'the operator sees it too');

  const restricted = await call(base, 'GET', '/api-keys', { token: created.body.token });
  t.equal(restricted.status, 401);
  t.equal(restricted.body.name, 'restricted_api_key', 'a sending key off the sending routes');
  t.equal((await call(base, 'GET', '/api-keys', { token: 'svc_nope' })).body.name, 'invalid_api_key');
  t.equal((await call(base, 'GET', '/api-keys')).body.name, 'missing_api_key');

  t.equal((await call(base, 'DELETE', `/api-keys/${created.body.id}`, { token: team.token })).status, 200);
  const revoked = await call(base, 'GET', '/emails', { token: created.body.token });
  t.equal(revoked.status, 403, 'the revoked key is refused on the very next request');
  t.equal(revoked.body.name, 'restricted_api_key');
});

t.test('GET /logs shows the requests, with their status', async (t) => {
  const team = await app.newTeam('Pg logs');
  await call(base, 'GET', '/api-keys?limit=3', { token: team.token });
  await call(base, 'GET', '/api-keys?limit=0', { token: team.token });
  // The polls are logged too (a flush may land between them): only the two calls above count.
  type Line = { id: string; endpoint: string };
  const keyCalls = await waitFor('the request log', async () => {
    const r = await call(base, 'GET', '/logs', { token: team.token });
    const lines = (r.body.data ?? []).filter((l: Line) => l.endpoint === '/api-keys');
    return r.status === 200 && lines.length >= 2 ? lines : undefined;
  });
  t.match(keyCalls[0], { method: 'GET', endpoint: '/api-keys', response_status: 422 });
  t.match(keyCalls[1], { method: 'GET', endpoint: '/api-keys', response_status: 200 });
  const failed = await call(base, 'GET', '/logs?status=422', { token: team.token });
  t.same(failed.body.data.map((l: Line) => l.id), [keyCalls[0].id], 'the status filter');
  const one = await call(base, 'GET', `/logs/${keyCalls[1].id}`, { token: team.token });
  t.equal(one.status, 200);
  t.equal(one.body.id, keyCalls[1].id);
});

t.test('POST /emails is accepted and delivered to the MX', async (t) => {
  const team = await app.newTeam('Pg sender');
  fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'pg-sender.net' });
  const sent = await call(base, 'POST', '/emails', {
    token: team.token, headers: { 'idempotency-key': 'pg-once' },
    body: { from: 'hello@pg-sender.net', to: 'ann@inbox-one.net', subject: 'From PostgreSQL', text: 'hi' },
  });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  const again = await call(base, 'POST', '/emails', {
    token: team.token, headers: { 'idempotency-key': 'pg-once' },
    body: { from: 'hello@pg-sender.net', to: 'ann@inbox-one.net', subject: 'From PostgreSQL', text: 'hi' },
  });
  t.equal(again.body.id, sent.body.id, 'the idempotent repeat answers the same email');
  const message = await waitFor('delivery', async () => mx.received.find((m) => m.rcptTo === 'ann@inbox-one.net'));
  t.match(message.raw.toString(), /Subject: From PostgreSQL/);
  const delivered = await waitFor('the delivered event', async () => (await eventsOf(app, sent.body.id)).find((e) => e.type === 'email.delivered'));
  t.equal(delivered.data.email_id, sent.body.id);
  const shown = await call(base, 'GET', `/emails/${sent.body.id}`, { token: team.token });
  t.equal(shown.body.last_event, 'delivered');
  t.equal(mx.received.filter((m) => m.rcptTo === 'ann@inbox-one.net').length, 1, 'sent once');
});

t.test('svc admin backup refuses on PostgreSQL, pointing to pg_dump', async (t) => {
  const r = await adminCall(app.adminSocket, 'POST', '/admin/backup', { path: '/tmp/svc-pg-backup-never' });
  t.equal(r.status, 501);
  t.match(r.body, { name: 'not_implemented', message: /pg_dump/ });
});
