import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';

// Custom event definitions and POST /events/send: every events call the unchanged SDK has, and
// each refusal over raw HTTP (spec Custom event definition, Custom events, Errors, Limits).
const app = await startTestAppliance();
t.teardown(() => app.stop());
const team = await app.newTeam('Events');
const resend = new Resend(team.token, { baseUrl: app.baseUrl });
const api = (method: string, path: string, body?: unknown, token = team.token) => call(app.baseUrl, method, path, { token, body });
const db = app.appliance.services.database.db;

t.test('SDK: create, get by id and by name, list, update, send, remove', async (t) => {
  const created = await resend.events.create({ name: 'signup.completed', schema: { plan: 'string', seats: 'number', trial: 'boolean', renews: 'date' } });
  t.equal(created.error, null, JSON.stringify(created.error));
  t.equal(created.data?.object, 'event');
  const id = created.data!.id;
  const byId = await resend.events.get(id);
  t.match(byId.data, { object: 'event', id, name: 'signup.completed', schema: { plan: 'string', seats: 'number' }, created_at: /^\d{4}-/ });
  const byName = await resend.events.get('signup.completed');
  t.equal(byName.data?.id, id);
  const list = await resend.events.list({ limit: 10 });
  t.equal(list.error, null);
  t.match(list.data, { object: 'list', has_more: false });
  t.same(list.data!.data.map((e) => e.name), ['signup.completed']);
  const updated = await resend.events.update('signup.completed', { schema: { plan: 'string' } });
  t.same(updated.data, { object: 'event', id });
  t.same((await resend.events.get(id)).data?.schema, { plan: 'string' }, 'PATCH replaces the schema');
  const contact = await resend.contacts.create({ email: 'evt@example.com' });
  const sent = await resend.events.send({ event: 'signup.completed', contactId: contact.data!.id, payload: { plan: 'pro' } });
  t.equal(sent.error, null, JSON.stringify(sent.error));
  t.same(sent.data, { object: 'event', event: 'signup.completed' });
  const byEmail = await resend.events.send({ event: 'signup.completed', email: 'EVT@example.com' });
  t.equal(byEmail.error, null, JSON.stringify(byEmail.error));
  const rows = await db.selectFrom('custom_events').selectAll().where('team_id', '=', team.teamId).execute();
  t.equal(rows.length, 2, 'two calls are two events');
  const removed = await resend.events.remove(id);
  t.same(removed.data, { object: 'event', id, deleted: true });
  t.equal((await resend.events.get(id)).error?.name, 'not_found');
  t.equal((await resend.events.create({ name: 'signup.completed' })).error, null, 'the name is free once deleted');
});

t.test('names: rules, reserved prefixes, duplicates (422 validation_error)', async (t) => {
  for (const name of ['svc:contact.created', 'Upper.case', '1starts.with.digit', 'a'.repeat(101), 'has space', '0190f2c4-1b2a-7c3d-8e4f-0123456789ab', 'store:order.paid', '']) {
    const r = await api('POST', '/events', { name });
    t.equal(r.status, 422, `${name.slice(0, 40)} refused`);
    t.equal(r.body.name, 'validation_error');
  }
  t.equal((await api('POST', '/events', { name: 'a'.repeat(100) })).status, 201, '100 characters is fine');
  t.equal((await api('POST', '/events', { name: 'dup.name' })).status, 201);
  const dup = await api('POST', '/events', { name: 'dup.name' });
  t.equal(dup.status, 422);
  t.equal(dup.body.name, 'validation_error');
});

t.test('schemas: types and at most 50 keys, one error per key', async (t) => {
  const bad = await api('POST', '/events', { name: 'bad.schema', schema: { a: 'text', b: 'number', c: 5 } });
  t.equal(bad.status, 422);
  t.same(bad.body.errors.map((e: { path: string }) => e.path), ['schema.a', 'schema.c']);
  const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'string']));
  t.equal((await api('POST', '/events', { name: 'many.keys', schema: many })).status, 422);
  delete many.k50;
  t.equal((await api('POST', '/events', { name: 'fifty.keys', schema: many })).status, 201);
  t.equal((await api('PATCH', '/events/fifty.keys', { schema: { x: 'when' } })).status, 422);
  t.equal((await api('PATCH', '/events/no.such', { schema: null })).status, 404);
  t.equal((await api('DELETE', '/events/no.such')).status, 404);
});

t.test('list: search is a case-insensitive substring; blank is 422 invalid_parameter', async (t) => {
  await api('POST', '/events', { name: 'order.shipped' });
  const found = await api('GET', '/events?search=SHIPP');
  t.same(found.body.data.map((e: { name: string }) => e.name), ['order.shipped']);
  const blank = await api('GET', '/events?search=%20');
  t.equal(blank.status, 422);
  t.equal(blank.body.name, 'invalid_parameter');
  t.equal((await api('GET', `/events?search=${'x'.repeat(201)}`)).status, 422);
});

t.test('send: payload against the schema, one errors[] entry per key', async (t) => {
  await api('POST', '/events', { name: 'typed.event', schema: { n: 'number', s: 'string', b: 'boolean', d: 'date' } });
  const c = await api('POST', '/contacts', { email: 'typed@example.com' });
  const ok = await api('POST', '/events/send', { event: 'typed.event', contact_id: c.body.id, payload: { n: 1, s: 'x', b: true, d: '2026-02-28' } });
  t.equal(ok.status, 202, JSON.stringify(ok.body));
  t.same(ok.body, { object: 'event', event: 'typed.event' });
  t.equal((await api('POST', '/events/send', { event: 'typed.event', contact_id: c.body.id, payload: { d: '2026-02-28T10:00:00+01:00' } })).status, 202);
  const bad = await api('POST', '/events/send', { event: 'typed.event', contact_id: c.body.id, payload: { n: '1', s: 2, b: 'yes', d: '2026-02-30', extra: 1 } });
  t.equal(bad.status, 422);
  t.equal(bad.body.name, 'validation_error');
  t.same(bad.body.errors.map((e: { path: string }) => e.path), ['payload.n', 'payload.s', 'payload.b', 'payload.d', 'payload.extra']);
  const big = await api('POST', '/events/send', { event: 'typed.event', contact_id: c.body.id, payload: { s: 'x'.repeat(16 * 1024) } });
  t.equal(big.status, 422, 'payload over 16 KB');
});

t.test('send: contact rules, unknown names and contacts, sending_access, no Idempotency-Key', async (t) => {
  await api('POST', '/events', { name: 'plain.event' });
  const c = await api('POST', '/contacts', { email: 'plain@example.com' });
  const neither = await api('POST', '/events/send', { event: 'plain.event' });
  t.equal(neither.status, 422);
  const both = await api('POST', '/events/send', { event: 'plain.event', contact_id: c.body.id, email: 'plain@example.com' });
  t.equal(both.status, 422);
  const unknownEvent = await api('POST', '/events/send', { event: 'no.such.event', contact_id: c.body.id });
  t.equal(unknownEvent.status, 404);
  t.equal(unknownEvent.body.name, 'not_found');
  t.equal((await api('POST', '/events/send', { event: 'plain.event', email: 'nobody@example.com' })).status, 404);
  t.equal((await api('POST', '/events/send', { event: 'plain.event', contact_id: '0190f2c4-1b2a-7c3d-8e4f-0123456789ab' })).status, 404);
  const other = await app.newTeam('Other events');
  t.equal((await api('POST', '/events/send', { event: 'plain.event', contact_id: c.body.id }, other.token)).status, 404, "another team's event and contact are not found");
  t.equal((await api('POST', '/events/send', { event: 'plain.event', contact_id: c.body.id, occurred_at: new Date().toISOString() })).status, 422, 'store fields are for store events');
  const sender = await app.newTeam('Sender key', 'sending_access');
  await api('POST', '/events', { name: 'plain.event' }, sender.token).then((r) => t.equal(r.status, 401, 'definitions need full_access'));
  const before = await db.selectFrom('custom_events').select('id').where('team_id', '=', team.teamId).execute();
  const headers = { 'Idempotency-Key': 'same' };
  for (let i = 0; i < 2; i++) {
    const r = await call(app.baseUrl, 'POST', '/events/send', { token: team.token, body: { event: 'plain.event', contact_id: c.body.id }, headers });
    t.equal(r.status, 202);
  }
  const after = await db.selectFrom('custom_events').select('id').where('team_id', '=', team.teamId).execute();
  t.equal(after.length - before.length, 2, 'the header changes nothing: two calls, two events');
});

t.test('store events: fixed payload keys, occurred_at bounds, anonymous browsers, idempotency_key', async (t) => {
  const c = await api('POST', '/contacts', { email: 'shopper@example.com' });
  const items = [{ title: 'Mug', quantity: 2, price: 9.5 }];
  const ok = await api('POST', '/events/send', { event: 'store:order.placed', contact_id: c.body.id, payload: { value: 19, currency: 'EUR', order_id: 'o1', items } });
  t.equal(ok.status, 202, JSON.stringify(ok.body));
  const bad = await api('POST', '/events/send', { event: 'store:order.placed', contact_id: c.body.id, payload: { coupon: 'X', items: [{ title: 'Mug', colour: 'red' }] } });
  t.equal(bad.status, 422);
  t.same(bad.body.errors.map((e: { path: string }) => e.path), ['payload.coupon', 'payload.items[0].colour']);
  const ahead = new Date(Date.now() + 6 * 60_000).toISOString();
  t.equal((await api('POST', '/events/send', { event: 'store:cart.updated', contact_id: c.body.id, occurred_at: ahead })).status, 422);
  const old = new Date(Date.now() - 91 * 86_400_000).toISOString();
  t.equal((await api('POST', '/events/send', { event: 'store:cart.updated', contact_id: c.body.id, occurred_at: old })).status, 422);
  t.equal((await api('POST', '/events/send', { event: 'store:cart.updated', anonymous_id: 'browser-1' })).status, 202, 'a browser alone waits');
  let waiting = await db.selectFrom('custom_events').selectAll().where('anonymous_id', '=', 'browser-1').execute();
  t.same(waiting.map((w) => w.contact_id), [null]);
  t.equal((await api('POST', '/events/send', { event: 'store:product.viewed', anonymous_id: 'browser-1', contact_id: c.body.id })).status, 202);
  waiting = await db.selectFrom('custom_events').selectAll().where('anonymous_id', '=', 'browser-1').orderBy('id').execute();
  t.same(waiting.map((w) => w.contact_id), [c.body.id, c.body.id], 'the browser is tied to the contact');
  t.equal((await api('POST', '/events/send', { event: 'store:cart.updated', anonymous_id: 'browser-1' })).status, 202);
  const tied = await db.selectFrom('custom_events').selectAll().where('anonymous_id', '=', 'browser-1').orderBy('id', 'desc').executeTakeFirstOrThrow();
  t.equal(tied.contact_id, c.body.id, 'later events of the browser are the contact\'s');
  for (let i = 0; i < 2; i++) t.equal((await api('POST', '/events/send', { event: 'store:order.paid', contact_id: c.body.id, idempotency_key: 'pay-1' })).status, 202);
  const paid = await db.selectFrom('custom_events').select('id').where('idempotency_key', '=', 'pay-1').execute();
  t.equal(paid.length, 1, 'a repeated idempotency_key is the same event');
  t.equal((await api('POST', '/events/send', { event: 'store:order.paid', contact_id: c.body.id, start_flows: 'no' })).status, 400, 'an ill-typed field is the contract layer\'s 400');
});
