import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { startDnsServer } from '../helpers/dns-server.js';
import { eventTypes } from '../../core/outbox/index.js';

// Endpoint management. Receivers here live on loopback, so the operator switch for private
// addresses is on; ssrf.test.ts proves the refusals with it off.
const dns = await startDnsServer({ 'hooks.example.test': [{ type: 'A', value: '127.0.0.1' }] });
t.teardown(() => dns.stop());
const app = await startTestAppliance({
  env: { SVC_WEBHOOKS_ALLOW_PRIVATE: 'true', SVC_DNS_SERVERS: dns.address, SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' },
});
t.teardown(() => app.stop());
const base = app.baseUrl;

t.test('create answers 201 {object, id, signing_secret} with a whsec_ secret of 24+ random bytes', async (t) => {
  const { token } = await app.newTeam('Create');
  const r = await call(base, 'POST', '/webhooks', { token, body: { endpoint: 'http://hooks.example.test:8080/in', events: ['email.sent', 'email.bounced'] } });
  t.equal(r.status, 201);
  t.same(Object.keys(r.body).sort(), ['id', 'object', 'signing_secret']);
  t.equal(r.body.object, 'webhook');
  t.match(r.body.signing_secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  t.ok(Buffer.from(r.body.signing_secret.slice(6), 'base64').length >= 24);
  const other = await call(base, 'POST', '/webhooks', { token, body: { endpoint: 'http://127.0.0.1:9/x', events: ['email.sent'] } });
  t.not(other.body.signing_secret, r.body.signing_secret, 'each endpoint its own secret');

  const got = await call(base, 'GET', `/webhooks/${r.body.id}`, { token });
  t.same(got.body, {
    object: 'webhook', id: r.body.id, endpoint: 'http://hooks.example.test:8080/in', events: ['email.sent', 'email.bounced'],
    status: 'enabled', created_at: got.body.created_at, signing_secret: r.body.signing_secret,
  });
  const sealed = app.appliance.services.database.sqlite.prepare('select secret_sealed from webhook_endpoints where id = ?').get(r.body.id) as { secret_sealed: string };
  t.notMatch(sealed.secret_sealed, r.body.signing_secret.slice(6), 'the secret is sealed at rest');

  const list = await call(base, 'GET', '/webhooks', { token });
  t.same(list.body.data.map((w: { id: string }) => w.id), [other.body.id, r.body.id], 'newest first');
  t.notOk('signing_secret' in list.body.data[0], 'lists do not carry secrets');
});

t.test('every spec event type is accepted; unknown ones are 400 validation_error per item', async (t) => {
  const { token } = await app.newTeam('Types');
  const all = await call(base, 'POST', '/webhooks', { token, body: { endpoint: 'http://127.0.0.1:9/all', events: [...eventTypes] } });
  t.equal(all.status, 201);
  const r = await call(base, 'POST', '/webhooks', { token, body: { endpoint: 'http://127.0.0.1:9/x', events: ['email.sent', 'email.exploded', 'topic.created'] } });
  t.equal(r.status, 400);
  t.equal(r.body.name, 'validation_error');
  t.same(r.body.errors.map((e: { path: string }) => e.path), ['events[1]', 'events[2]']);
  const empty = await call(base, 'POST', '/webhooks', { token, body: { endpoint: 'http://127.0.0.1:9/x', events: [] } });
  t.equal(empty.status, 400);
  t.equal(empty.body.name, 'validation_error');
  const patch = await call(base, 'PATCH', `/webhooks/${all.body.id}`, { token, body: { events: ['contact.topics.updated'] } });
  t.equal(patch.status, 400, 'update refuses unknown types too');
  const dup = await call(base, 'POST', '/webhooks', { token, body: { endpoint: 'http://127.0.0.1:9/d', events: ['email.sent', 'email.sent'] } });
  t.same((await call(base, 'GET', `/webhooks/${dup.body.id}`, { token })).body.events, ['email.sent'], 'duplicates collapse');
});

t.test('missing fields are 422 missing_required_field; a bad URL is 422 validation_error', async (t) => {
  const { token } = await app.newTeam('Missing');
  const noEndpoint = await call(base, 'POST', '/webhooks', { token, body: { events: ['email.sent'] } });
  t.equal(noEndpoint.status, 422);
  t.equal(noEndpoint.body.name, 'missing_required_field');
  const noEvents = await call(base, 'POST', '/webhooks', { token, body: { endpoint: 'http://127.0.0.1:9/' } });
  t.equal(noEvents.body.name, 'missing_required_field');
  for (const endpoint of ['not a url', 'ftp://127.0.0.1/x', 'file:///etc/passwd', 'http://user:pass@127.0.0.1/x', 'http://nowhere.example.test/x']) {
    const r = await call(base, 'POST', '/webhooks', { token, body: { endpoint, events: ['email.sent'] } });
    t.equal(r.status, 422, endpoint);
    t.equal(r.body.name, 'validation_error', endpoint);
    t.match(r.body.errors, [{ path: 'endpoint' }], endpoint);
  }
});

t.test('PATCH updates endpoint, events and status; DELETE removes; other teams see 404', async (t) => {
  const a = await app.newTeam('Owner');
  const b = await app.newTeam('Stranger');
  const r = await call(base, 'POST', '/webhooks', { token: a.token, body: { endpoint: 'http://127.0.0.1:9/a', events: ['email.sent'] } });
  const id = r.body.id;
  const patched = await call(base, 'PATCH', `/webhooks/${id}`, { token: a.token, body: { endpoint: 'http://127.0.0.1:9/b', events: ['email.delivered'], status: 'disabled' } });
  t.same(patched.body, { object: 'webhook', id });
  const got = await call(base, 'GET', `/webhooks/${id}`, { token: a.token });
  t.equal(got.body.endpoint, 'http://127.0.0.1:9/b');
  t.same(got.body.events, ['email.delivered']);
  t.equal(got.body.status, 'disabled');
  t.equal((await call(base, 'PATCH', `/webhooks/${id}`, { token: a.token, body: { status: 'paused' } })).status, 400);
  t.equal((await call(base, 'PATCH', `/webhooks/${id}`, { token: a.token, body: { endpoint: 'http://169.254.169.254/' } })).status, 422);

  for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/rotate-secret'], ['GET', '/attempts']] as const) {
    const res = await call(base, method, `/webhooks/${id}${path}`, { token: b.token, body: method === 'PATCH' ? { status: 'enabled' } : undefined });
    t.equal(res.status, 404, `${method} ${path} of another team`);
  }
  t.equal((await call(base, 'GET', '/webhooks/not-an-id', { token: a.token })).status, 404);
  const deleted = await call(base, 'DELETE', `/webhooks/${id}`, { token: a.token });
  t.same(deleted.body, { object: 'webhook', id, deleted: true });
  t.equal((await call(base, 'GET', `/webhooks/${id}`, { token: a.token })).status, 404);
});

t.test('rotate-secret answers a new secret and GET shows it', async (t) => {
  const { token } = await app.newTeam('Rotate');
  const r = await call(base, 'POST', '/webhooks', { token, body: { endpoint: 'http://127.0.0.1:9/r', events: ['email.sent'] } });
  const rotated = await call(base, 'POST', `/webhooks/${r.body.id}/rotate-secret`, { token });
  t.equal(rotated.status, 200);
  t.equal(rotated.body.object, 'webhook');
  t.equal(rotated.body.id, r.body.id);
  t.match(rotated.body.signing_secret, /^whsec_/);
  t.not(rotated.body.signing_secret, r.body.signing_secret);
  t.equal((await call(base, 'GET', `/webhooks/${r.body.id}`, { token })).body.signing_secret, rotated.body.signing_secret);
});

t.test('attempts and replay of unknown messages are 404; the request log keeps no secret', async (t) => {
  const { token } = await app.newTeam('Unknown');
  const r = await call(base, 'POST', '/webhooks', { token, body: { endpoint: 'http://127.0.0.1:9/u', events: ['email.sent'] } });
  t.same((await call(base, 'GET', `/webhooks/${r.body.id}/attempts`, { token })).body, { object: 'list', has_more: false, data: [] });
  const replay = await call(base, 'POST', `/webhooks/${r.body.id}/messages/${crypto.randomUUID()}/replay`, { token });
  t.equal(replay.status, 404);
  await app.appliance.services.api.logWriter.flush();
  const logs = await call(base, 'GET', '/logs?search=webhooks', { token });
  const created = logs.body.data.find((l: { method: string; endpoint: string }) => l.method === 'POST' && l.endpoint === '/webhooks');
  const detail = await call(base, 'GET', `/logs/${created.id}`, { token });
  t.equal(detail.body.response_body, null, 'a body naming the signing secret is not kept');
});

t.test('a sending_access key is refused', async (t) => {
  const { token } = await app.newTeam('Sending', 'sending_access');
  const r = await call(base, 'GET', '/webhooks', { token });
  t.equal(r.status, 401);
  t.equal(r.body.name, 'restricted_api_key');
});

t.test('the resend SDK: webhooks create, get, list, update, rotateSigningSecret, remove', async (t) => {
  const { token } = await app.newTeam('SDK');
  const resend = new Resend(token, { baseUrl: base });
  const created = await resend.webhooks.create({ endpoint: 'http://127.0.0.1:9/sdk', events: ['email.sent', 'suppression.added'] });
  t.equal(created.error, null);
  t.match(created.data, { object: 'webhook', signing_secret: /^whsec_/ });
  const id = created.data!.id;
  const got = await resend.webhooks.get(id);
  t.equal(got.data?.signing_secret, created.data?.signing_secret);
  t.same(got.data?.events, ['email.sent', 'suppression.added']);
  const listed = await resend.webhooks.list({ limit: 5 });
  t.same(listed.data?.data.map((w) => w.id), [id]);
  const updated = await resend.webhooks.update(id, { status: 'disabled', events: ['email.delivered'] });
  t.same(updated.data, { object: 'webhook', id });
  const rotated = await resend.webhooks.rotateSigningSecret(id);
  t.equal(rotated.error, null);
  t.not(rotated.data?.signing_secret, created.data?.signing_secret);
  const events = await resend.webhooks.events.list({ webhookId: id });
  t.same(events.data, { object: 'list', has_more: false, data: [] });
  const bad = await resend.webhooks.create({ endpoint: 'http://127.0.0.1:9/sdk', events: ['topic.created'] });
  t.equal(bad.error?.name, 'validation_error');
  const removed = await resend.webhooks.remove(id);
  t.same(removed.data, { object: 'webhook', id, deleted: true });
});
