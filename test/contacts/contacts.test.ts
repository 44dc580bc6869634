import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentHashOf, consentRecords, platformEvents, teamEvents } from '../helpers/audience.js';
import { call } from '../helpers/http.js';
import { testClock } from '../helpers/test-clock.js';

// Contacts over raw HTTP: the spec's rules 1-7 of Contact, every refusal with its status and name,
// the events and the consent trail they leave.
const clock = testClock(new Date('2026-05-04T09:00:00.000Z'));
const app = await startTestAppliance({ clock });
t.teardown(() => app.stop());
const base = app.baseUrl;
const db = app.appliance.services.database.db;

t.test('create: 201 {object, id}, the contact with typed properties, contact.created, a consent record', async (t) => {
  const { token, teamId } = await app.newTeam('Create');
  const r = await call(base, 'POST', '/contacts', {
    token, headers: { 'user-agent': 'crm-sync/2.1' },
    body: { email: 'Ann.Lee@Example.com', first_name: 'Ann', last_name: 'Lee', properties: { plan: 'pro', seats: 3, beta: true, gone: null } },
  });
  t.equal(r.status, 201, JSON.stringify(r.body));
  t.same(Object.keys(r.body).sort(), ['id', 'object']);
  t.equal(r.body.object, 'contact');
  const expected = {
    object: 'contact', id: r.body.id, email: 'Ann.Lee@Example.com', first_name: 'Ann', last_name: 'Lee', created_at: '2026-05-04T09:00:00.000Z',
    unsubscribed: false, subscription_status: 'subscribed',
    properties: { beta: { type: 'boolean', value: true }, plan: { type: 'string', value: 'pro' }, seats: { type: 'number', value: 3 } },
  };
  t.same((await call(base, 'GET', `/contacts/${r.body.id}`, { token })).body, expected);
  t.same((await call(base, 'GET', '/contacts/ann.lee@EXAMPLE.com', { token })).body, expected, 'by address, whatever its case');
  const events = await teamEvents(app, teamId, 'contact.');
  t.same(events, [{ type: 'contact.created', data: expected }], 'contact.created carries the contact');
  const platform = await platformEvents(app, teamId);
  t.same(platform.map((e) => [e.type, e.contact_id, e.data]), [['svc:contact.created', r.body.id, { contact_id: r.body.id }]]);
  const consent = await consentRecords(app, teamId);
  t.equal(consent.length, 1);
  t.match(consent[0], {
    contact_id: r.body.id, kind: 'subscription', value: 'subscribed', source: 'api', ip: /127\.0\.0\.1/, user_agent: 'crm-sync/2.1',
    email_hash: consentHashOf(app, 'ann.lee@example.com'), created_at: '2026-05-04T09:00:00.000Z',
  });
  t.notMatch(JSON.stringify(consent), /ann/i, 'the trail never holds the address');
});

t.test('rule 1: a repeat create updates, keeps the id, and never lifts an opt-out', async (t) => {
  const { token, teamId } = await app.newTeam('Repeat');
  const first = await call(base, 'POST', '/contacts', { token, body: { email: 'bo@example.com', first_name: 'Bo', unsubscribed: true } });
  t.equal(first.status, 201);
  const again = await call(base, 'POST', '/contacts', { token, body: { email: 'BO@example.com', first_name: 'Robert', unsubscribed: false, properties: { city: 'Oslo' } } });
  t.equal(again.status, 201, 'no duplicate error, no 409');
  t.same(again.body, { object: 'contact', id: first.body.id });
  const shown = (await call(base, 'GET', `/contacts/${first.body.id}`, { token })).body;
  t.match(shown, { email: 'bo@example.com', first_name: 'Robert', unsubscribed: true, subscription_status: 'unsubscribed', properties: { city: { value: 'Oslo' } } });
  const viaStatus = await call(base, 'POST', '/contacts', { token, body: { email: 'bo@example.com', subscription_status: 'subscribed' } });
  t.equal(viaStatus.status, 201);
  t.equal((await call(base, 'GET', '/contacts/bo@example.com', { token })).body.subscription_status, 'unsubscribed', 'subscription_status cannot lift it either');
  const same = await call(base, 'POST', '/contacts', { token, body: { email: 'bo@example.com', first_name: 'Robert' } });
  t.equal(same.status, 201);
  t.same((await teamEvents(app, teamId, 'contact.')).map((e) => e.type), ['contact.created', 'contact.updated'], 'contact.updated when something changed, nothing when nothing did');
  t.same((await consentRecords(app, teamId)).map((c) => c.value), ['unsubscribed'], 'no consent record without a change');
});

t.test('subscription_status agrees with unsubscribed; never_subscribed only for a contact that already is', async (t) => {
  const { token, teamId } = await app.newTeam('Status');
  const disagree = await call(base, 'POST', '/contacts', { token, body: { email: 'x@example.com', unsubscribed: true, subscription_status: 'subscribed' } });
  t.equal(disagree.status, 422);
  t.equal(disagree.body.name, 'validation_error');
  t.equal((await call(base, 'GET', '/contacts/x@example.com', { token })).status, 404, 'nothing was created');
  const never = await call(base, 'POST', '/contacts', { token, body: { email: 'never@example.com', subscription_status: 'never_subscribed' } });
  t.equal(never.status, 201);
  t.match((await call(base, 'GET', `/contacts/${never.body.id}`, { token })).body, { unsubscribed: false, subscription_status: 'never_subscribed' });
  const sub = await call(base, 'POST', '/contacts', { token, body: { email: 'sub@example.com' } });
  const refused = await call(base, 'PATCH', `/contacts/${sub.body.id}`, { token, body: { subscription_status: 'never_subscribed' } });
  t.equal(refused.status, 422);
  t.equal(refused.body.name, 'validation_error');
  t.equal((await call(base, 'PATCH', `/contacts/${never.body.id}`, { token, body: { subscription_status: 'never_subscribed' } })).status, 200);
  const optIn = await call(base, 'PATCH', `/contacts/${never.body.id}`, { token, body: { subscription_status: 'subscribed', unsubscribed: false } });
  t.equal(optIn.status, 200);
  const patchDisagree = await call(base, 'PATCH', `/contacts/${never.body.id}`, { token, body: { subscription_status: 'unsubscribed', unsubscribed: false } });
  t.equal(patchDisagree.status, 422);
  t.equal(patchDisagree.body.name, 'validation_error');
  const trail = (await consentRecords(app, teamId)).filter((c) => c.contact_id === never.body.id).map((c) => c.value);
  t.same(trail, ['never_subscribed', 'subscribed'], 'the opt-in is recorded');
});

t.test('PATCH touches only what is sent; properties merge key by key; null removes one', async (t) => {
  const { token, teamId } = await app.newTeam('Patch');
  const c = await call(base, 'POST', '/contacts', { token, body: { email: 'cy@example.com', first_name: 'Cy', last_name: 'Young', properties: { plan: 'free', score: 1 } } });
  const r = await call(base, 'PATCH', `/contacts/cy@example.com`, { token, body: { last_name: null, properties: { score: 2.5, plan: null, tier: 'gold' } } });
  t.equal(r.status, 200);
  t.same(r.body, { object: 'contact', id: c.body.id });
  const shown = (await call(base, 'GET', `/contacts/${c.body.id}`, { token })).body;
  t.match(shown, { first_name: 'Cy', last_name: null, subscription_status: 'subscribed' });
  t.same(shown.properties, { score: { type: 'number', value: 2.5 }, tier: { type: 'string', value: 'gold' } });
  const updated = (await teamEvents(app, teamId, 'contact.')).filter((e) => e.type === 'contact.updated');
  t.equal(updated.length, 1);
  t.same(updated[0]!.data, shown, 'contact.updated carries the contact after the change');

  const unsub = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { unsubscribed: true } });
  t.equal(unsub.status, 200);
  t.match((await call(base, 'GET', `/contacts/${c.body.id}`, { token })).body, { unsubscribed: true, subscription_status: 'unsubscribed' });
  const back = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { unsubscribed: false } });
  t.equal(back.status, 200);
  t.match((await call(base, 'GET', `/contacts/${c.body.id}`, { token })).body, { unsubscribed: false, subscription_status: 'subscribed' }, 'an explicit update may opt back in');
  t.same((await consentRecords(app, teamId)).map((x) => [x.kind, x.value]), [['subscription', 'subscribed'], ['subscription', 'unsubscribed'], ['subscription', 'subscribed']]);

  const moved = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { email: 'Cy.New@example.com' } });
  t.equal(moved.status, 200);
  t.equal((await call(base, 'GET', '/contacts/cy.new@example.com', { token })).body.id, c.body.id, 'found at the new address');
  t.equal((await call(base, 'GET', '/contacts/cy@example.com', { token })).status, 404);
  await call(base, 'POST', '/contacts', { token, body: { email: 'taken@example.com' } });
  const taken = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { email: 'TAKEN@example.com' } });
  t.equal(taken.status, 422);
  t.equal(taken.body.name, 'validation_error');
  t.match(taken.body.errors, [{ path: 'email' }]);
});

t.test('properties: a wrong type for a declared key is 422 invalid_parameter naming it; keys ignore case', async (t) => {
  const { token } = await app.newTeam('Props');
  const c = await call(base, 'POST', '/contacts', { token, body: { email: 'p@example.com', properties: { plan: 'pro' } } });
  const wrong = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { properties: { plan: 5 } } });
  t.equal(wrong.status, 422);
  t.equal(wrong.body.name, 'invalid_parameter');
  t.match(wrong.body.message, /plan/);
  t.match(wrong.body.errors, [{ path: 'properties.plan' }]);
  const onCreate = await call(base, 'POST', '/contacts', { token, body: { email: 'q@example.com', properties: { plan: true } } });
  t.equal(onCreate.status, 422);
  t.equal(onCreate.body.name, 'invalid_parameter');
  t.equal((await call(base, 'GET', '/contacts/q@example.com', { token })).status, 404, 'the refused create wrote nothing');
  const cased = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { properties: { PLAN: 'team' } } });
  t.equal(cased.status, 200);
  t.same((await call(base, 'GET', `/contacts/${c.body.id}`, { token })).body.properties, { plan: { type: 'string', value: 'team' } }, 'PLAN is the declared plan');
  const badKey = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { properties: { 'no-dash': 'x' } } });
  t.equal(badKey.status, 422);
  t.equal(badKey.body.name, 'invalid_parameter');
  const tooLong = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { properties: { plan: 'x'.repeat(501) } } });
  t.equal(tooLong.status, 422);
  t.equal(tooLong.body.name, 'invalid_parameter');
  const illTyped = await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { properties: { plan: { nested: 1 } } } });
  t.equal(illTyped.status, 400);
  t.equal(illTyped.body.name, 'validation_error');
});

t.test('properties: at most 100 per team, then a new key is refused', async (t) => {
  const { token, teamId } = await app.newTeam('Hundred');
  const properties = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, i]));
  t.equal((await call(base, 'POST', '/contacts', { token, body: { email: 'many@example.com', properties } })).status, 201);
  const more = await call(base, 'PATCH', '/contacts/many@example.com', { token, body: { properties: { p100: 1 } } });
  t.equal(more.status, 422);
  t.equal(more.body.name, 'validation_error');
  t.match(more.body.message, /100/);
  t.equal((await call(base, 'PATCH', '/contacts/many@example.com', { token, body: { properties: { p99: 7 } } })).status, 200, 'declared keys still take values');
  const count = await db.selectFrom('contact_properties').select((eb) => eb.fn.countAll<number>().as('n')).where('team_id', '=', teamId).executeTakeFirst();
  t.equal(Number(count?.n), 100);
});

t.test('the list: newest first, no properties and no has_more; walk with after to an empty page', async (t) => {
  const { token } = await app.newTeam('List');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await call(base, 'POST', '/contacts', { token, body: { email: `l${i}@example.com`, properties: { n: i } } })).body.id);
  const all = await call(base, 'GET', '/contacts', { token });
  t.equal(all.status, 200);
  t.same(Object.keys(all.body).sort(), ['data', 'object']);
  t.same(all.body.data.map((c: { id: string }) => c.id), [...ids].reverse());
  t.same(Object.keys(all.body.data[0]).sort(), ['created_at', 'email', 'first_name', 'id', 'last_name', 'subscription_status', 'unsubscribed']);
  const walked: string[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 10; pages++) {
    const page = await call(base, 'GET', `/contacts?limit=2${after ? `&after=${after}` : ''}`, { token });
    if (page.body.data.length === 0) break;
    walked.push(...page.body.data.map((c: { id: string }) => c.id));
    after = page.body.data.at(-1).id;
  }
  t.same(walked, [...ids].reverse(), 'every contact once, ending on an empty page');
  const before = await call(base, 'GET', `/contacts?limit=2&before=${ids[1]}`, { token });
  t.same(before.body.data.map((c: { id: string }) => c.id), [ids[3], ids[2]]);
  for (const query of ['limit=0', 'limit=101', 'after=nope', `after=${ids[0]}&before=${ids[1]}`, 'segment_id=nope']) {
    const r = await call(base, 'GET', `/contacts?${query}`, { token });
    t.equal(r.status, 422, query);
    t.equal(r.body.name, 'invalid_parameter', query);
  }
  const segment = await call(base, 'GET', `/contacts?segment_id=${ids[0]}`, { token });
  t.equal(segment.status, 404, 'no segment has that id');
  t.equal(segment.body.name, 'not_found');
});

t.test('refusals of the contact routes, each with its status and name', async (t) => {
  const { token } = await app.newTeam('Refusals');
  const cases: [string, string, unknown, number, string][] = [
    ['POST', '/contacts', {}, 422, 'missing_required_field'],
    ['POST', '/contacts', { email: 'not an address' }, 422, 'validation_error'],
    ['POST', '/contacts', { email: 'A <a@example.com>' }, 422, 'validation_error'],
    ['POST', '/contacts', { email: 'n@example.com', first_name: 'x'.repeat(201) }, 422, 'validation_error'],
    ['POST', '/contacts', { email: 'n@example.com', last_name: 'x'.repeat(201) }, 422, 'validation_error'],
    ['POST', '/contacts', { email: 'n@example.com', nickname: 'N' }, 400, 'validation_error'],
    ['POST', '/contacts', { email: 'n@example.com', unsubscribed: 'yes' }, 400, 'validation_error'],
    ['POST', '/contacts', { email: 'n@example.com', subscription_status: 'maybe' }, 400, 'validation_error'],
    ['POST', '/contacts', { email: 'n@example.com', topics: [{ id: 'nope', subscription: 'opt_in' }] }, 422, 'validation_error'],
    ['POST', '/contacts', { email: 'n@example.com', topics: [{ id: crypto.randomUUID(), subscription: 'opt_in' }] }, 422, 'validation_error'],
    ['POST', '/contacts', { email: 'n@example.com', segments: [{ id: crypto.randomUUID() }] }, 422, 'validation_error'],
    ['GET', '/contacts/not-an-id-or-address', undefined, 422, 'invalid_parameter'],
    ['GET', `/contacts/${crypto.randomUUID()}`, undefined, 404, 'not_found'],
    ['GET', '/contacts/nobody@example.com', undefined, 404, 'not_found'],
    ['PATCH', `/contacts/${crypto.randomUUID()}`, { first_name: 'x' }, 404, 'not_found'],
    ['PATCH', '/contacts/nobody@example.com', { email: 'bad' }, 422, 'validation_error'],
    ['DELETE', `/contacts/${crypto.randomUUID()}`, undefined, 404, 'not_found'],
    ['PUT', '/contacts', {}, 405, 'method_not_allowed'],
  ];
  for (const [method, path, body, status, name] of cases) {
    const r = await call(base, method, path, { token, body });
    t.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}`);
    t.equal(r.body.name, name, `${method} ${path} ${JSON.stringify(body)}: ${r.body.message}`);
  }
  t.equal((await call(base, 'GET', '/contacts/n@example.com', { token })).status, 404, 'no refused create left a contact');
});

t.test('rule 5: reads with either key permission, writes need full_access', async (t) => {
  const owner = await app.newTeam('Keys');
  const sender = await app.appliance.services.api.foundation.apiKeys.create(owner.teamId, { name: 'sender', permission: 'sending_access' }, { kind: 'operator' });
  const c = await call(base, 'POST', '/contacts', { token: owner.token, body: { email: 'k@example.com' } });
  t.equal((await call(base, 'GET', '/contacts', { token: sender.token })).status, 200);
  t.equal((await call(base, 'GET', `/contacts/${c.body.id}`, { token: sender.token })).status, 200);
  t.equal((await call(base, 'GET', `/contacts/${c.body.id}/topics`, { token: sender.token })).status, 200);
  t.equal((await call(base, 'GET', '/contact-properties', { token: sender.token })).status, 200);
  for (const [method, path, body] of [
    ['POST', '/contacts', { email: 'k2@example.com' }], ['PATCH', `/contacts/${c.body.id}`, { first_name: 'K' }], ['DELETE', `/contacts/${c.body.id}`, undefined],
    ['PATCH', `/contacts/${c.body.id}/topics`, []], ['POST', '/contact-properties', { key: 'k', type: 'string' }],
  ] as const) {
    const r = await call(base, method, path, { token: sender.token, body });
    t.equal(r.status, 401, `${method} ${path}`);
    t.equal(r.body.name, 'restricted_api_key', `${method} ${path}`);
  }
  t.equal((await call(base, 'GET', `/contacts/${c.body.id}`, { token: owner.token })).body.first_name, null, 'nothing changed');
});

t.test('rule 6: another team\'s contact is 404, by id and by address', async (t) => {
  const a = await app.newTeam('Team A');
  const b = await app.newTeam('Team B');
  const c = await call(base, 'POST', '/contacts', { token: a.token, body: { email: 'shared@example.com' } });
  for (const ref of [c.body.id, 'shared@example.com']) {
    for (const [method, path, body] of [
      ['GET', `/contacts/${ref}`, undefined], ['PATCH', `/contacts/${ref}`, { first_name: 'B' }], ['DELETE', `/contacts/${ref}`, undefined],
      ['GET', `/contacts/${ref}/topics`, undefined], ['PATCH', `/contacts/${ref}/topics`, []],
    ] as const) {
      const r = await call(base, method, path, { token: b.token, body });
      t.equal(r.status, 404, `${method} ${path}`);
      t.equal(r.body.name, 'not_found');
    }
  }
  t.same((await call(base, 'GET', '/contacts', { token: b.token })).body.data, [], 'nor listed');
  const own = await call(base, 'POST', '/contacts', { token: b.token, body: { email: 'shared@example.com' } });
  t.not(own.body.id, c.body.id, 'the same address is a contact of each team on its own');
  t.equal((await call(base, 'GET', `/contacts/${c.body.id}`, { token: a.token })).body.first_name, null, "team A's contact untouched");
});

t.test('rule 3: DELETE erases; only the hashed consent trail stays; contact.deleted carries it as it was', async (t) => {
  const { token, teamId } = await app.newTeam('Erase');
  const topic = await call(base, 'POST', '/topics', { token, body: { name: 'News', default_subscription: 'opt_out' } });
  const c = await call(base, 'POST', '/contacts', {
    token, body: { email: 'Erin@Example.com', first_name: 'Erin', properties: { plan: 'pro' }, topics: [{ id: topic.body.id, subscription: 'opt_in' }] },
  });
  await call(base, 'PATCH', `/contacts/${c.body.id}`, { token, body: { unsubscribed: true } });
  const asItWas = (await call(base, 'GET', `/contacts/${c.body.id}`, { token })).body;
  const r = await call(base, 'DELETE', '/contacts/erin@example.com', { token });
  t.equal(r.status, 200);
  t.same(r.body, { object: 'contact', id: c.body.id, contact: c.body.id, deleted: true });
  t.equal((await call(base, 'GET', `/contacts/${c.body.id}`, { token })).status, 404);
  t.equal((await call(base, 'DELETE', `/contacts/${c.body.id}`, { token })).status, 404, 'a second erasure finds nothing');
  const deleted = (await teamEvents(app, teamId, 'contact.')).filter((e) => e.type === 'contact.deleted');
  t.same(deleted.map((e) => e.data), [asItWas], 'contact.deleted: the contact as it was, properties included');

  t.equal((await db.selectFrom('contacts').selectAll().where('id', '=', c.body.id).execute()).length, 0, 'the row is gone');
  t.equal((await db.selectFrom('contact_property_values').selectAll().where('contact_id', '=', c.body.id).execute()).length, 0, 'its property values');
  t.equal((await db.selectFrom('contact_topics').selectAll().where('contact_id', '=', c.body.id).execute()).length, 0, 'its topic choices');
  const trail = await consentRecords(app, teamId);
  const hash = consentHashOf(app, 'erin@example.com');
  t.same(trail.map((x) => [x.kind, x.value, x.contact_id, x.email_hash]), [
    ['subscription', 'subscribed', null, hash], ['topic', 'opt_in', null, hash], ['subscription', 'unsubscribed', null, hash], ['erasure', 'erased', null, hash],
  ], 'the opt-out stays provable under the hash; nothing names the contact');
  t.notMatch(JSON.stringify(trail), /erin/i, 'the address is in none of them');
  t.not(hash, (await import('node:crypto')).createHash('sha256').update('erin@example.com').digest('hex'), 'keyed: a plain digest of the address does not find it');

  const again = await call(base, 'POST', '/contacts', { token, body: { email: 'erin@example.com' } });
  t.equal(again.status, 201);
  t.not(again.body.id, c.body.id, 'a later create is a new contact');
  t.match((await call(base, 'GET', `/contacts/${again.body.id}`, { token })).body, { first_name: null, subscription_status: 'subscribed', properties: {} });
});
