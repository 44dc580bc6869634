import t from 'tap';
import { addExplicitMembers, checkSegmentsExist, countMembers } from '../../core/segments/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { platformEvents } from '../helpers/audience.js';
import { call } from '../helpers/http.js';
import { apiOf, memberEmails, membershipScenario } from '../helpers/segments.js';

// Segments over raw HTTP on SQLite: the routes and their shapes, every refusal with its status
// and name, filters checked per condition, membership by filter and by hand, svc:segment.entered.
const app = await startTestAppliance();
t.teardown(() => app.stop());
const base = app.baseUrl;

t.test('create, get, list, rename, delete: the segment\'s shape at each step', async (t) => {
  const { token } = await app.newTeam('Segments');
  const filter = { all: [{ field: 'email', op: 'contains', value: '@example.com' }] };
  const r = await call(base, 'POST', '/segments', { token, body: { name: 'Customers', filter } });
  t.equal(r.status, 201, JSON.stringify(r.body));
  t.same(r.body, { object: 'segment', id: r.body.id });
  t.match(r.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/, 'a UUIDv7');
  const got = await call(base, 'GET', `/segments/${r.body.id}`, { token });
  t.same(got.body, { object: 'segment', id: r.body.id, name: 'Customers', created_at: got.body.created_at, filter });
  const hand = await call(base, 'POST', '/segments', { token, body: { name: 'By hand' } });
  t.equal(hand.status, 201);
  t.equal((await call(base, 'GET', `/segments/${hand.body.id}`, { token })).body.filter, null, 'no filter: explicit members only');
  const nulled = await call(base, 'POST', '/segments', { token, body: { name: 'Null filter', filter: null } });
  t.equal(nulled.status, 201);
  const list = await call(base, 'GET', '/segments', { token });
  t.same(list.body, {
    object: 'list', has_more: false,
    data: [nulled.body.id, hand.body.id, r.body.id].map((id) => ({ id, name: list.body.data.find((x: { id: string }) => x.id === id).name, created_at: list.body.data.find((x: { id: string }) => x.id === id).created_at })),
  }, 'newest first, without filters');
  t.same(Object.keys(list.body.data[0]).sort(), ['created_at', 'id', 'name']);
  const page = await call(base, 'GET', '/segments?limit=1', { token });
  t.same(page.body.data.map((x: { id: string }) => x.id), [nulled.body.id]);
  t.equal(page.body.has_more, true);
  const next = await call(base, 'GET', `/segments?limit=2&after=${nulled.body.id}`, { token });
  t.same(next.body.data.map((x: { id: string }) => x.id), [hand.body.id, r.body.id]);
  t.same((await call(base, 'GET', `/segments?before=${r.body.id}`, { token })).body.data.map((x: { id: string }) => x.id), [nulled.body.id, hand.body.id]);

  const renamed = await call(base, 'PATCH', `/segments/${r.body.id}`, { token, body: { name: 'Buyers' } });
  t.equal(renamed.status, 200, JSON.stringify(renamed.body));
  t.same(renamed.body, { object: 'segment', id: r.body.id });
  t.match((await call(base, 'GET', `/segments/${r.body.id}`, { token })).body, { name: 'Buyers', filter });
  t.equal((await call(base, 'PATCH', `/segments/${r.body.id}`, { token, body: { id: r.body.id, name: 'Buyers', filter } })).status, 200, 'the same filter and its own id are accepted');

  const removed = await call(base, 'DELETE', `/segments/${r.body.id}`, { token });
  t.same(removed.body, { object: 'segment', id: r.body.id, deleted: true });
  t.equal((await call(base, 'GET', `/segments/${r.body.id}`, { token })).status, 404);
  t.equal((await call(base, 'GET', `/segments/${r.body.id}/contacts`, { token })).status, 404);
  t.equal((await call(base, 'GET', `/contacts?segment_id=${r.body.id}`, { token })).status, 404);
  t.equal((await call(base, 'DELETE', `/segments/${r.body.id}`, { token })).status, 404);
  t.equal((await call(base, 'POST', '/segments', { token, body: { name: 'buyers' } })).status, 201, 'a deleted segment\'s name is free again');
});

t.test('refusals of the segment routes, each with its status and name', async (t) => {
  const { token } = await app.newTeam('Segment refusals');
  const live = await call(base, 'POST', '/segments', { token, body: { name: 'Weekly' } });
  const other = await call(base, 'POST', '/segments', { token, body: { name: 'Daily', filter: { all: [{ field: 'first_name', op: 'exists' }] } } });
  const cases: [string, string, unknown, number, string][] = [
    ['POST', '/segments', { name: 'weekly ' }, 422, 'invalid_parameter'],
    ['POST', '/segments', { name: 'x'.repeat(201) }, 422, 'validation_error'],
    ['POST', '/segments', { name: '  ' }, 422, 'validation_error'],
    ['POST', '/segments', {}, 422, 'missing_required_field'],
    ['POST', '/segments', { name: 'Extra', audience: 'x' }, 400, 'validation_error'],
    ['POST', '/segments', { name: 'Bad filter', filter: 'all' }, 400, 'validation_error'],
    ['PATCH', `/segments/${live.body.id}`, { name: 'DAILY' }, 422, 'invalid_parameter'],
    ['PATCH', `/segments/${live.body.id}`, { name: 'x'.repeat(201) }, 422, 'validation_error'],
    ['PATCH', `/segments/${live.body.id}`, { id: other.body.id }, 422, 'invalid_parameter'],
    ['PATCH', `/segments/${live.body.id}`, { filter: { all: [{ field: 'first_name', op: 'exists' }] } }, 422, 'validation_error'],
    ['PATCH', `/segments/${other.body.id}`, { filter: null }, 422, 'validation_error'],
    ['PATCH', `/segments/${crypto.randomUUID()}`, { name: 'x' }, 404, 'not_found'],
    ['GET', '/segments/not-an-id', undefined, 404, 'not_found'],
    ['GET', '/segments?limit=500', undefined, 422, 'invalid_parameter'],
    ['GET', `/segments/${crypto.randomUUID()}/contacts`, undefined, 404, 'not_found'],
    ['GET', '/contacts?segment_id=nope', undefined, 422, 'invalid_parameter'],
    ['GET', `/contacts?segment_id=${crypto.randomUUID()}`, undefined, 404, 'not_found'],
    ['POST', '/contacts', { email: 'n@example.com', segments: [{ id: crypto.randomUUID() }] }, 422, 'validation_error'],
    ['POST', `/contacts/nobody@example.com/segments/${live.body.id}`, undefined, 404, 'not_found'],
  ];
  for (const [method, path, body, status, name] of cases) {
    const r = await call(base, method, path, { token, body });
    t.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}`);
    t.equal(r.body.name, name, `${method} ${path} ${JSON.stringify(body)}: ${r.body.message}`);
  }
  const patchFilter = await call(base, 'PATCH', `/segments/${other.body.id}`, { token, body: { filter: { all: [{ field: 'first_name', op: 'exists' }, { field: 'last_name', op: 'exists' }] } } });
  t.match(patchFilter.body.message, /never changed/);
  t.equal((await call(base, 'PATCH', `/segments/${live.body.id}`, { token, body: { name: 'WEEKLY' } })).status, 200, 'its own name in another case is no duplicate');
  const sender = await app.appliance.services.api.foundation.apiKeys.create((await app.newTeam('Segment sender')).teamId, { name: 's', permission: 'sending_access' }, { kind: 'operator' });
  t.equal((await call(base, 'GET', '/segments', { token: sender.token })).status, 200, 'reads with either permission');
  t.equal((await call(base, 'POST', '/segments', { token: sender.token, body: { name: 'S' } })).status, 401, 'writes need full_access');
});

t.test('a filter is checked at creation: one errors[] entry per bad condition, with its path', async (t) => {
  const { token } = await app.newTeam('Filter checks');
  await call(base, 'POST', '/contact-properties', { token, body: { key: 'plan', type: 'string' } });
  await call(base, 'POST', '/contact-properties', { token, body: { key: 'seats', type: 'number' } });
  await call(base, 'POST', '/contact-properties', { token, body: { key: 'vip', type: 'boolean' } });
  const gone = await call(base, 'POST', '/topics', { token, body: { name: 'Gone', default_subscription: 'opt_in' } });
  await call(base, 'DELETE', `/topics/${gone.body.id}`, { token });
  const refused = async (filter: unknown) => {
    const r = await call(base, 'POST', '/segments', { token, body: { name: `f${Math.random()}`, filter } });
    t.equal(r.status, 422, JSON.stringify(filter));
    t.equal(r.body.name, 'validation_error', r.body.message);
    return r.body.errors as { path: string; message: string }[];
  };
  const many = await refused({ all: [
    { field: 'phone', op: 'eq', value: 'x' },
    { field: 'first_name', op: 'gt', value: 'x' },
    { field: 'properties.tier', op: 'eq', value: 'gold' },
    { field: 'properties.seats', op: 'contains', value: '1' },
    { field: 'properties.vip', op: 'gt', value: true },
    { field: 'properties.PLAN', op: 'eq', value: 'pro' },
    { any: [{ topic: crypto.randomUUID(), subscription: 'opt_in' }, { topic: gone.body.id, subscription: 'opt_out' }] },
    { field: 'email', op: 'exists' },
    { field: 'properties.seats', op: 'eq', value: 'ten' },
    { field: 'created_at', op: 'gt', value: 'yesterday' },
    { field: 'unsubscribed', op: 'eq', value: 'yes' },
    { field: 'first_name', op: 'in', value: [] },
    { topic: 'x', subscription: 'maybe' },
  ] });
  t.same(many.map((e) => e.path).sort(), [
    'filter.all[0]', 'filter.all[1]', 'filter.all[2]', 'filter.all[3]', 'filter.all[4]', 'filter.all[6].any[0]', 'filter.all[6].any[1]',
    'filter.all[7]', 'filter.all[8]', 'filter.all[9]', 'filter.all[10]', 'filter.all[11]', 'filter.all[12]',
  ].sort(), 'each bad condition once; the declared key in another case is fine');
  const message = (path: string) => many.find((e) => e.path === path)?.message;
  t.match(message('filter.all[0]'), /Unknown field `phone`/);
  t.match(message('filter.all[1]'), /Operator `gt` does not suit `first_name` \(string\)/);
  t.match(message('filter.all[2]'), /Property `tier` is not declared/);
  t.match(message('filter.all[3]'), /Operator `contains` does not suit `properties.seats` \(number\)/);
  t.match(message('filter.all[6].any[0]'), /Topic `.*` not found/);
  t.match(message('filter.all[6].any[1]'), /Topic `.*` not found/, 'a deleted topic is no topic');

  const four = await refused({ all: [{ any: [{ not: { all: [{ field: 'first_name', op: 'exists' }] } }] }] });
  t.same(four, [{ path: 'filter.all[0].any[0].not', message: 'Groups nest at most 3 deep.' }]);
  const conditions = (n: number) => ({ any: Array.from({ length: n }, (_, i) => ({ field: 'properties.seats', op: 'eq', value: i })) });
  const twentyOne = await refused(conditions(21));
  t.same(twentyOne.map((e) => e.path), ['filter']);
  t.match(twentyOne[0]!.message, /at most 20 conditions; this one has 21/);
  t.equal((await call(base, 'POST', '/segments', { token, body: { name: 'Twenty', filter: conditions(20) } })).status, 201, '20 conditions are fine');
  t.equal((await call(base, 'POST', '/segments', { token, body: { name: 'Three deep', filter: { all: [{ any: [{ not: { field: 'first_name', op: 'exists' } }] }] } } })).status, 201, 'three deep is fine');
  t.same((await refused({ field: 'first_name', op: 'exists' })).map((e) => e.path), ['filter'], 'the root is a group');
  t.same((await refused({ all: [] })).map((e) => e.path), ['filter.all'], 'an empty group');
  t.same((await refused({ all: [{ field: 'first_name', op: 'eq', value: 'x', extra: 1 }] })).map((e) => e.path), ['filter.all[0]']);
  t.same((await refused({ all: [{ any: [1] }], any: [] })).map((e) => e.path), ['filter']);
  const created = await call(base, 'POST', '/segments', { token, body: { name: 'Normalised', filter: { all: [{ field: 'properties.PLAN', op: 'eq', value: 'pro' }, { field: 'created_at', op: 'gte', value: '2026-01-31' }] } } });
  t.same((await call(base, 'GET', `/segments/${created.body.id}`, { token })).body.filter,
    { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }, { field: 'created_at', op: 'gte', value: '2026-01-31T00:00:00.000Z' }] }, 'stored with the declared key and a canonical instant');
});

t.test('another team\'s segment is 404 on every route', async (t) => {
  const mine = await app.newTeam('Segment owner');
  const theirs = await app.newTeam('Segment outsider');
  const seg = await call(base, 'POST', '/segments', { token: mine.token, body: { name: 'Mine' } });
  const contact = await call(base, 'POST', '/contacts', { token: mine.token, body: { email: 'owned@example.com', segments: [{ id: seg.body.id }] } });
  t.equal(contact.status, 201, JSON.stringify(contact.body));
  const own = await call(base, 'POST', '/contacts', { token: theirs.token, body: { email: 'theirs@example.com' } });
  for (const [method, path] of [
    ['GET', `/segments/${seg.body.id}`], ['PATCH', `/segments/${seg.body.id}`], ['DELETE', `/segments/${seg.body.id}`],
    ['GET', `/segments/${seg.body.id}/contacts`], ['GET', `/contacts?segment_id=${seg.body.id}`],
    ['POST', `/contacts/${own.body.id}/segments/${seg.body.id}`], ['DELETE', `/contacts/${own.body.id}/segments/${seg.body.id}`],
    ['GET', `/contacts/${contact.body.id}/segments`], ['POST', `/contacts/owned@example.com/segments/${seg.body.id}`],
  ] as const) {
    const r = await call(base, method, path, { token: theirs.token, body: method === 'PATCH' ? { name: 'x' } : undefined });
    t.equal(r.status, 404, `${method} ${path}`);
    t.equal(r.body.name, 'not_found');
  }
  t.equal((await call(base, 'POST', '/contacts', { token: theirs.token, body: { email: 'x@example.com', segments: [{ id: seg.body.id }] } })).status, 422, 'a create naming it');
  t.same(await memberEmails(apiOf(app, mine.token), seg.body.id), ['owned@example.com'], 'unchanged');
});

t.test('membership by filter and by hand: all, any, not, properties, topics, the contact list by segment', async (t) => {
  await membershipScenario(t, app, 'Membership');
});

t.test('explicit membership: POST /contacts segments, add, remove, erasure, svc:segment.entered', async (t) => {
  const { token, teamId } = await app.newTeam('Explicit');
  const api = apiOf(app, token);
  const hand = (await api('POST', '/segments', { name: 'Hand' })).body.id;
  const vips = (await api('POST', '/segments', { name: 'VIPs', filter: { all: [{ field: 'first_name', op: 'eq', value: 'Vi' }] } })).body.id;
  const a = await api('POST', '/contacts', { email: 'a@example.com', segments: [{ id: hand }, { id: hand.toUpperCase() }] });
  t.equal(a.status, 201, JSON.stringify(a.body));
  t.same(await memberEmails(api, hand), ['a@example.com']);
  t.same(await memberEmails(api, vips), []);
  t.same((await api('GET', `/contacts/${a.body.id}/segments`)).body, { object: 'list', has_more: false, data: [{ id: hand, name: 'Hand', created_at: (await api('GET', `/segments/${hand}`)).body.created_at }] });
  t.same((await api('POST', `/contacts/A@EXAMPLE.COM/segments/${hand}`)).body, { id: hand }, 'adding again (by address) changes nothing');

  const vi = await api('POST', '/contacts', { email: 'vi@example.com', first_name: 'Vi', segments: [{ id: vips }] });
  t.equal(vi.status, 201);
  await api('POST', `/contacts/${a.body.id}/segments/${vips}`);
  await api('PATCH', `/contacts/${a.body.id}`, { first_name: 'Vi' });
  const entered = (await platformEvents(app, teamId)).filter((e) => e.type === 'svc:segment.entered').map((e) => [e.contact_id, e.data.segment_id]);
  t.same(entered, [[a.body.id, hand], [vi.body.id, vips], [a.body.id, vips]],
    'an addition, a new contact matching (once, though also added by hand), an addition; not the PATCH of one already in');
  t.same(await memberEmails(api, vips), ['a@example.com', 'vi@example.com']);
  const segsOfA = (await api('GET', `/contacts/${a.body.id}/segments?limit=1`)).body;
  t.equal(segsOfA.has_more, true);
  t.same(segsOfA.data.map((s: { id: string }) => s.id), [vips], 'newest first, a page at a time');

  t.equal((await api('DELETE', `/contacts/${a.body.id}`)).status, 200);
  t.same(await memberEmails(api, hand), [], 'an erased contact is in no segment');
  t.same(await app.appliance.services.database.db.selectFrom('segment_members').selectAll().where('contact_id', '=', a.body.id).execute(), [], 'its additions are gone');
});

t.test('the reads and writes other areas use: countMembers, addExplicitMembers in the caller\'s transaction', async (t) => {
  const { token, teamId } = await app.newTeam('Segment callers');
  const other = await app.newTeam('Segment callers outsider');
  const api = apiOf(app, token);
  const db = app.appliance.services.database.db;
  const ids: string[] = [];
  for (const email of ['p_1@example.com', 'p%2@example.com', 'q@example.com']) ids.push((await api('POST', '/contacts', { email })).body.id);
  const stranger = (await call(base, 'POST', '/contacts', { token: other.token, body: { email: 'p_1@example.com' } })).body.id;
  const literal = (await api('POST', '/segments', { name: 'Literal', filter: { any: [{ field: 'email', op: 'contains', value: '_1' }, { field: 'email', op: 'contains', value: '%2' }] } })).body.id;
  t.same(await memberEmails(api, literal), ['p%2@example.com', 'p_1@example.com'], '% and _ are taken literally');
  t.equal(await countMembers(db, teamId, literal), 2);
  const added = await inWriteTransaction(db, (trx) => addExplicitMembers(trx, teamId, literal, [...ids, stranger], new Date()));
  t.same(added.sort(), [...ids].sort(), 'the team\'s contacts only');
  t.equal(await countMembers(db, teamId, literal), 3);
  const entered = (await platformEvents(app, teamId)).filter((e) => e.type === 'svc:segment.entered').map((e) => e.contact_id);
  t.same(entered, [ids[2]], 'announced only for the one not already in by the filter');
  t.same(await inWriteTransaction(db, (trx) => addExplicitMembers(trx, teamId, literal, ids, new Date())), [], 'again: nothing added');
  await t.rejects(countMembers(db, other.teamId, literal), { statusCode: 404 } as never, 'another team\'s segment is not found');
  await t.rejects(inWriteTransaction(db, (trx) => checkSegmentsExist(trx, teamId, [literal, crypto.randomUUID()])), { statusCode: 422, options: { errors: [{ path: 'segments[1].id' }] } } as never);
});
