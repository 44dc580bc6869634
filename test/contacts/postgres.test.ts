import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentHashOf, consentRecords, platformEvents, teamEvents } from '../helpers/audience.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// The audience's core flows with SVC_DATABASE_URL naming a fresh PostgreSQL database: contacts
// with typed properties, repeat creates, topics and choices, the properties routes, erasure with
// its hashed trail, the contact limit, and delivered recipients joining from sends.
const pg = await createTestDatabase();
const dns = await mailZone();
const mx = await startFakeMx();
const app = await startTestAppliance({
  databaseUrl: pg.url, roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_CONTACTS_LIMIT: '3' },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); await pg.drop(); });
const base = app.baseUrl;
const db = app.appliance.services.database.db;

t.test('contacts on PostgreSQL: create, repeat, get by address, merge properties, list, cross-team 404', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  const { token, teamId } = await app.newTeam('Pg audience');
  const c = await call(base, 'POST', '/contacts', { token, body: { email: 'Pat@Example.com', first_name: 'Pat', properties: { plan: 'pro', seats: 2.5, vip: true } } });
  t.equal(c.status, 201, JSON.stringify(c.body));
  const again = await call(base, 'POST', '/contacts', { token, body: { email: 'pat@example.com', unsubscribed: true } });
  t.equal(again.body.id, c.body.id);
  const lift = await call(base, 'POST', '/contacts', { token, body: { email: 'pat@example.com', unsubscribed: false } });
  t.equal(lift.status, 201);
  const patched = await call(base, 'PATCH', '/contacts/PAT@example.com', { token, body: { properties: { plan: null, seats: 3 } } });
  t.equal(patched.status, 200);
  const shown = (await call(base, 'GET', `/contacts/${c.body.id}`, { token })).body;
  t.same(shown, {
    object: 'contact', id: c.body.id, email: 'Pat@Example.com', first_name: 'Pat', last_name: null, created_at: shown.created_at,
    unsubscribed: true, subscription_status: 'unsubscribed', properties: { seats: { type: 'number', value: 3 }, vip: { type: 'boolean', value: true } },
  }, 'the repeat create did not lift the opt-out');
  const wrong = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { properties: { vip: 'no' } } });
  t.equal(wrong.status, 422);
  t.equal(wrong.body.name, 'invalid_parameter');
  const second = await call(base, 'POST', '/contacts', { token, body: { email: 'quinn@example.com' } });
  const list = await call(base, 'GET', '/contacts?limit=1', { token });
  t.same(list.body, { object: 'list', data: [{ id: second.body.id, email: 'quinn@example.com', first_name: null, last_name: null, created_at: list.body.data[0].created_at, unsubscribed: false, subscription_status: 'subscribed' }] });
  const next = await call(base, 'GET', `/contacts?limit=1&after=${second.body.id}`, { token });
  t.same(next.body.data.map((x: { id: string }) => x.id), [c.body.id]);
  t.same((await call(base, 'GET', `/contacts?limit=1&after=${c.body.id}`, { token })).body.data, [], 'an empty page ends the walk');
  t.same((await teamEvents(app, teamId, 'contact.')).map((e) => e.type), ['contact.created', 'contact.updated', 'contact.updated', 'contact.created']);
  const other = await app.newTeam('Pg outsider');
  t.equal((await call(base, 'GET', `/contacts/${c.body.id}`, { token: other.token })).status, 404);
  t.equal((await call(base, 'GET', '/contacts/pat@example.com', { token: other.token })).status, 404);
});

t.test('topics and choices on PostgreSQL: live-duplicate names, the default, choices with their trail', async (t) => {
  const { token, teamId } = await app.newTeam('Pg topics');
  const news = await call(base, 'POST', '/topics', { token, body: { name: 'News', default_subscription: 'opt_in' } });
  t.equal(news.status, 201);
  const dup = await call(base, 'POST', '/topics', { token, body: { name: 'NEWS', default_subscription: 'opt_out' } });
  t.equal(dup.status, 422);
  t.equal(dup.body.name, 'invalid_parameter');
  t.equal((await call(base, 'PATCH', `/topics/${news.body.id}`, { token, body: { default_subscription: 'opt_out' } })).body.name, 'validation_error');
  const c = await call(base, 'POST', '/contacts', { token, body: { email: 'rae@example.com', topics: [{ id: news.body.id, subscription: 'opt_out' }] } });
  t.equal(c.status, 201);
  t.same((await call(base, 'GET', `/contacts/${c.body.id}/topics`, { token })).body.data, [{ id: news.body.id, name: 'News', description: null, subscription: 'opt_out' }]);
  t.equal((await call(base, 'PATCH', `/contacts/${c.body.id}/topics`, { token, body: [{ id: news.body.id, subscription: 'opt_in' }] })).status, 200);
  t.same((await platformEvents(app, teamId)).map((e) => e.type), ['svc:contact.created', 'svc:topic.unsubscribed', 'svc:topic.subscribed']);
  t.equal((await call(base, 'DELETE', `/topics/${news.body.id}`, { token })).status, 200);
  t.equal((await call(base, 'POST', '/topics', { token, body: { name: 'News', default_subscription: 'opt_out' } })).status, 201, 'the name is free once deleted');
  t.same((await call(base, 'GET', `/contacts/${c.body.id}/topics`, { token })).body.data.map((x: { subscription: string }) => x.subscription), ['opt_out'], 'the new topic, at its default');
});

t.test('contact properties and erasure on PostgreSQL', async (t) => {
  const { token, teamId } = await app.newTeam('Pg erasure');
  const prop = await call(base, 'POST', '/contact-properties', { token, body: { key: 'tier', type: 'string', fallback_value: 'basic' } });
  t.equal(prop.status, 201);
  t.match((await call(base, 'GET', '/contact-properties/TIER', { token })).body, { key: 'tier', type: 'string', fallback_value: 'basic' });
  t.equal((await call(base, 'POST', '/contact-properties', { token, body: { key: 'Tier', type: 'number' } })).body.name, 'invalid_parameter');
  const c = await call(base, 'POST', '/contacts', { token, body: { email: 'Sid@example.com', properties: { tier: 'gold' } } });
  await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { unsubscribed: true } });
  const asItWas = (await call(base, 'GET', `/contacts/${c.body.id}`, { token })).body;
  t.equal((await call(base, 'DELETE', `/contacts/${c.body.id}`, { token })).status, 200);
  t.same((await teamEvents(app, teamId, 'contact.deleted')).map((e) => e.data), [asItWas]);
  t.equal((await db.selectFrom('contact_property_values').selectAll().where('contact_id', '=', c.body.id).execute()).length, 0);
  const trail = await consentRecords(app, teamId);
  t.same(trail.map((x) => [x.kind, x.value, x.contact_id, x.email_hash]), [
    ['subscription', 'subscribed', null, consentHashOf(app, 'sid@example.com')],
    ['subscription', 'unsubscribed', null, consentHashOf(app, 'sid@example.com')],
    ['erasure', 'erased', null, consentHashOf(app, 'sid@example.com')],
  ]);
  t.notMatch(JSON.stringify(trail), /sid/i);
  t.equal((await call(base, 'DELETE', `/contact-properties/${prop.body.id}`, { token })).status, 200);
});

t.test('delivered recipients join from sends on PostgreSQL, and are not counted toward the limit', async (t) => {
  const team = await app.newTeam('Pg sends');
  fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'pg-audience.net' });
  for (const email of ['one@example.com', 'kept@inbox-one.net', 'gone@inbox-one.net']) await call(base, 'POST', '/contacts', { token: team.token, body: { email, first_name: 'Kept' } });
  const kept = (await call(base, 'GET', '/contacts/kept@inbox-one.net', { token: team.token })).body;
  await call(base, 'DELETE', '/contacts/gone@inbox-one.net', { token: team.token });
  const sent = await call(base, 'POST', '/emails', { token: team.token, body: { from: 'hi@pg-audience.net', to: ['ann@inbox-one.net', 'gone@inbox-one.net', 'kept@inbox-one.net'], subject: 's', text: 't' } });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  await waitFor('every delivery', async () => (await call(base, 'GET', `/emails/${sent.body.id}`, { token: team.token })).body.last_event === 'delivered'
    && ['ann@inbox-one.net', 'gone@inbox-one.net', 'kept@inbox-one.net'].every((a) => mx.received.some((m) => m.rcptTo === a)));
  const ann = await waitFor('ann@ to join', async () => (await call(base, 'GET', '/contacts/ann@inbox-one.net', { token: team.token })).body.subscription_status);
  t.equal(ann, 'never_subscribed');
  t.equal((await call(base, 'GET', '/contacts/gone@inbox-one.net', { token: team.token })).status, 404, 'an erased address never joins');
  t.same((await call(base, 'GET', '/contacts/kept@inbox-one.net', { token: team.token })).body, kept, 'an existing contact is not changed');
  t.equal((await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'three@example.com' } })).status, 201, 'ann@ is not counted');
  const refused = await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'four@example.com' } });
  t.equal(refused.status, 422);
  t.equal(refused.body.message, 'Contact limit reached.');
});
