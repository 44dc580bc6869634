import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';

// The contact-properties routes over raw HTTP: declare, list, read, change the fallback, delete,
// and each refusal with its status and name.
const app = await startTestAppliance();
t.teardown(() => app.stop());
const base = app.baseUrl;

t.test('declare, list, get by id or key, change the fallback, delete with every value', async (t) => {
  const { token } = await app.newTeam('Properties');
  const plan = await call(base, 'POST', '/contact-properties', { token, body: { key: 'plan', type: 'string', fallback_value: 'free' } });
  t.equal(plan.status, 201, JSON.stringify(plan.body));
  t.same(Object.keys(plan.body).sort(), ['id', 'object']);
  t.equal(plan.body.object, 'contact_property');
  const vip = await call(base, 'POST', '/contact-properties', { token, body: { key: 'vip', type: 'boolean' } });
  t.equal(vip.status, 201);
  const got = await call(base, 'GET', `/contact-properties/${plan.body.id}`, { token });
  t.match(got.body, { object: 'contact_property', id: plan.body.id, key: 'plan', type: 'string', fallback_value: 'free', created_at: /^\d{4}-/ });
  t.same((await call(base, 'GET', '/contact-properties/PLAN', { token })).body, got.body, 'by key, ignoring case');
  const list = await call(base, 'GET', '/contact-properties', { token });
  t.match(list.body, { object: 'list', has_more: false });
  t.same(list.body.data.map((p: { key: string }) => p.key), ['vip', 'plan']);
  t.notOk('object' in list.body.data[0], 'list items without object');
  t.equal(list.body.data[0].fallback_value, null);

  const c = await call(base, 'POST', '/contacts', { token, body: { email: 'v@example.com', properties: { vip: false, plan: 'pro' } } });
  t.same((await call(base, 'GET', `/contacts/${c.body.id}`, { token })).body.properties, { plan: { type: 'string', value: 'pro' }, vip: { type: 'boolean', value: false } });
  const wrong = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { properties: { vip: 'yes' } } });
  t.equal(wrong.status, 422);
  t.equal(wrong.body.name, 'invalid_parameter', 'a declared boolean takes only booleans');

  const patched = await call(base, 'PATCH', `/contact-properties/${plan.body.id}`, { token, body: { fallback_value: 'starter' } });
  t.equal(patched.status, 200);
  t.same(patched.body, { object: 'contact_property', id: plan.body.id });
  t.equal((await call(base, 'GET', `/contact-properties/${plan.body.id}`, { token })).body.fallback_value, 'starter');
  t.equal((await call(base, 'PATCH', `/contact-properties/${plan.body.id}`, { token, body: { fallback_value: null } })).status, 200);
  t.equal((await call(base, 'GET', `/contact-properties/${plan.body.id}`, { token })).body.fallback_value, null);

  const removed = await call(base, 'DELETE', `/contact-properties/${plan.body.id}`, { token });
  t.equal(removed.status, 200);
  t.same(removed.body, { object: 'contact_property', id: plan.body.id, deleted: true });
  t.equal((await call(base, 'GET', `/contact-properties/${plan.body.id}`, { token })).status, 404);
  t.same((await call(base, 'GET', `/contacts/${c.body.id}`, { token })).body.properties, { vip: { type: 'boolean', value: false } }, 'its values went with it');
  const retyped = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { properties: { plan: 3 } } });
  t.equal(retyped.status, 200, 'the key may be declared again, with another type');
  t.equal((await call(base, 'GET', '/contact-properties/plan', { token })).body.type, 'number');
});

t.test('refusals of the contact-properties routes, each with its status and name', async (t) => {
  const { token } = await app.newTeam('Property refusals');
  const seats = await call(base, 'POST', '/contact-properties', { token, body: { key: 'seats', type: 'number', fallback_value: 1 } });
  const cases: [string, string, unknown, number, string][] = [
    ['POST', '/contact-properties', { key: 'Seats', type: 'number' }, 422, 'invalid_parameter'],
    ['POST', '/contact-properties', { key: '9lives', type: 'number' }, 422, 'validation_error'],
    ['POST', '/contact-properties', { key: 'has-dash', type: 'string' }, 422, 'validation_error'],
    ['POST', '/contact-properties', { key: 'x'.repeat(51), type: 'string' }, 422, 'validation_error'],
    ['POST', '/contact-properties', { key: 'plan', type: 'string', fallback_value: 3 }, 422, 'validation_error'],
    ['POST', '/contact-properties', { key: 'plan', type: 'string', fallback_value: 'x'.repeat(501) }, 422, 'validation_error'],
    ['POST', '/contact-properties', { key: 'plan', type: 'date' }, 400, 'validation_error'],
    ['POST', '/contact-properties', { type: 'string' }, 422, 'missing_required_field'],
    ['POST', '/contact-properties', { key: 'plan' }, 422, 'missing_required_field'],
    ['PATCH', `/contact-properties/${seats.body.id}`, { fallback_value: 'many' }, 422, 'validation_error'],
    ['PATCH', `/contact-properties/${seats.body.id}`, { type: 'string' }, 400, 'validation_error'],
    ['PATCH', `/contact-properties/${crypto.randomUUID()}`, { fallback_value: 2 }, 404, 'not_found'],
    ['GET', '/contact-properties/nothing', undefined, 404, 'not_found'],
    ['DELETE', `/contact-properties/${crypto.randomUUID()}`, undefined, 404, 'not_found'],
  ];
  for (const [method, path, body, status, name] of cases) {
    const r = await call(base, method, path, { token, body });
    t.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}`);
    t.equal(r.body.name, name, `${method} ${path} ${JSON.stringify(body)}: ${r.body.message}`);
  }
  t.match((await call(base, 'GET', `/contact-properties/${seats.body.id}`, { token })).body, { key: 'seats', type: 'number', fallback_value: 1 }, 'unchanged');
  const outsider = await app.newTeam('Property outsider');
  t.equal((await call(base, 'GET', `/contact-properties/${seats.body.id}`, { token: outsider.token })).status, 404, 'another team\'s property is 404');
  t.equal((await call(base, 'DELETE', '/contact-properties/seats', { token: outsider.token })).status, 404);
});

t.test('at most 100 declared properties a team', async (t) => {
  const { token } = await app.newTeam('Property limit');
  for (let i = 0; i < 100; i++) {
    const r = await call(base, 'POST', '/contact-properties', { token, body: { key: `k${i}`, type: 'string' } });
    if (r.status !== 201) throw new Error(`k${i}: ${JSON.stringify(r.body)}`);
  }
  const more = await call(base, 'POST', '/contact-properties', { token, body: { key: 'k100', type: 'string' } });
  t.equal(more.status, 422);
  t.equal(more.body.name, 'validation_error');
  const viaContact = await call(base, 'POST', '/contacts', { token, body: { email: 'l@example.com', properties: { k100: 'x' } } });
  t.equal(viaContact.status, 422);
  t.equal(viaContact.body.name, 'validation_error');
  t.equal((await call(base, 'GET', '/contacts/l@example.com', { token })).status, 404);
});
