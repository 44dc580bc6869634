import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { testClock } from '../helpers/test-clock.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { addSuppression, isSuppressed, suppressionsRepo } from '../../core/suppressions/index.js';

const clock = testClock(new Date('2026-03-10T12:00:00.000Z'));
const app = await startTestAppliance({ clock, env: { SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
t.teardown(() => app.stop());
const base = app.baseUrl;
const db = app.appliance.services.database.db;
const events = eventsRepo(db);

async function eventsOf(teamId: string, type: string) {
  return (await events.after(0, 10_000)).filter((e) => e.team_id === teamId && e.type === type).map((e) => ({ ...e, data: JSON.parse(e.data) }));
}

t.test('POST /suppressions adds a manual suppression (201) and writes suppression.added once', async (t) => {
  const { token, teamId } = await app.newTeam('Add');
  const r = await call(base, 'POST', '/suppressions', { token, body: { email: 'Bob@Example.com' } });
  t.equal(r.status, 201);
  t.same(Object.keys(r.body).sort(), ['id', 'object']);
  t.equal(r.body.object, 'suppression');
  const again = await call(base, 'POST', '/suppressions', { token, body: { email: ' bob@EXAMPLE.com ' } });
  t.equal(again.status, 201);
  t.equal(again.body.id, r.body.id, 'the same address (any case) answers the existing record');
  const got = await call(base, 'GET', `/suppressions/${r.body.id}`, { token });
  t.same(got.body, { object: 'suppression', id: r.body.id, email: 'Bob@Example.com', origin: 'manual', source_id: null, created_at: '2026-03-10T12:00:00.000Z' });
  const added = await eventsOf(teamId, 'suppression.added');
  t.equal(added.length, 1, 'one event, not one per call');
  t.same(added[0]!.data, { id: r.body.id, email: 'Bob@Example.com', origin: 'manual', source_id: null, created_at: '2026-03-10T12:00:00.000Z' });
});

t.test('add refuses what is not one address', async (t) => {
  const { token } = await app.newTeam('Bad add');
  const missing = await call(base, 'POST', '/suppressions', { token, body: {} });
  t.equal(missing.status, 422);
  t.equal(missing.body.name, 'missing_required_field');
  for (const email of ['not-an-address', 'Bob <bob@example.com>', 'a@b', 'two@example.com, three@example.com', '']) {
    const r = await call(base, 'POST', '/suppressions', { token, body: { email } });
    t.equal(r.status, 422, email);
    t.equal(r.body.name, 'validation_error', email);
  }
  const extra = await call(base, 'POST', '/suppressions', { token, body: { email: 'x@example.com', origin: 'bounce' } });
  t.equal(extra.status, 400, 'origin cannot be chosen by the caller');
});

t.test('GET by address is case-insensitive; 404 means not suppressed; junk is 422', async (t) => {
  const { token } = await app.newTeam('Get');
  const r = await call(base, 'POST', '/suppressions', { token, body: { email: 'carol@example.org' } });
  const byAddress = await call(base, 'GET', `/suppressions/${encodeURIComponent('CAROL@Example.ORG')}`, { token });
  t.equal(byAddress.status, 200);
  t.equal(byAddress.body.id, r.body.id);
  const none = await call(base, 'GET', `/suppressions/${encodeURIComponent('dave@example.org')}`, { token });
  t.equal(none.status, 404);
  t.equal(none.body.name, 'not_found');
  const unknownId = await call(base, 'GET', `/suppressions/${crypto.randomUUID()}`, { token });
  t.equal(unknownId.status, 404);
  const junk = await call(base, 'GET', '/suppressions/neither-id-nor-address', { token });
  t.equal(junk.status, 422);
  t.equal(junk.body.name, 'invalid_parameter');
});

t.test("another team's suppression is 404 by id and by address", async (t) => {
  const a = await app.newTeam('A');
  const b = await app.newTeam('B');
  const r = await call(base, 'POST', '/suppressions', { token: a.token, body: { email: 'shared@example.com' } });
  t.equal((await call(base, 'GET', `/suppressions/${r.body.id}`, { token: b.token })).status, 404);
  t.equal((await call(base, 'GET', '/suppressions/shared@example.com', { token: b.token })).status, 404);
  t.equal((await call(base, 'DELETE', `/suppressions/${r.body.id}`, { token: b.token })).status, 404);
  t.equal((await call(base, 'GET', `/suppressions/${r.body.id}`, { token: a.token })).status, 200);
});

t.test('DELETE by id or address lifts it and writes suppression.removed', async (t) => {
  const { token, teamId } = await app.newTeam('Delete');
  const one = await call(base, 'POST', '/suppressions', { token, body: { email: 'one@example.com' } });
  const two = await call(base, 'POST', '/suppressions', { token, body: { email: 'two@example.com' } });
  const byId = await call(base, 'DELETE', `/suppressions/${one.body.id}`, { token });
  t.same(byId.body, { object: 'suppression', id: one.body.id, deleted: true });
  const byAddress = await call(base, 'DELETE', '/suppressions/TWO@example.com', { token });
  t.same(byAddress.body, { object: 'suppression', id: two.body.id, deleted: true });
  t.equal((await call(base, 'GET', '/suppressions/one@example.com', { token })).status, 404, 'sending allowed again');
  t.equal((await call(base, 'DELETE', `/suppressions/${one.body.id}`, { token })).status, 404, 'a second delete finds nothing');
  const removed = await eventsOf(teamId, 'suppression.removed');
  t.same(removed.map((e) => e.data.id), [one.body.id, two.body.id]);
  t.equal(removed[1]!.data.email, 'two@example.com');
  t.equal(removed[1]!.data.origin, 'manual');
});

t.test('list: newest first, origin, search, inclusive dates, pagination', async (t) => {
  const { token, teamId } = await app.newTeam('List');
  clock.set(new Date('2026-04-01T08:00:00.000Z'));
  const first = await call(base, 'POST', '/suppressions', { token, body: { email: 'first_one@alpha.test' } });
  clock.set(new Date('2026-04-02T23:59:59.000Z'));
  await inTransaction(db, (trx) => addSuppression(trx, teamId, 'bounced@beta.test', 'bounce', '0190aaaa-0000-7000-8000-000000000001', clock));
  clock.set(new Date('2026-04-03T00:00:00.000Z'));
  await inTransaction(db, (trx) => addSuppression(trx, teamId, 'Complainer%@Gamma.test', 'complaint', null, clock));
  clock.set(new Date('2026-04-04T10:00:00.000Z'));
  await inTransaction(db, (trx) => addSuppression(trx, teamId, 'left@delta.test', 'unsubscribe', null, clock));

  const all = await call(base, 'GET', '/suppressions', { token });
  t.equal(all.body.object, 'list');
  t.equal(all.body.has_more, false);
  t.same(all.body.data.map((s: { email: string }) => s.email), ['left@delta.test', 'Complainer%@Gamma.test', 'bounced@beta.test', 'first_one@alpha.test']);
  t.notOk('object' in all.body.data[0], 'list items are entries without `object`');
  t.equal(all.body.data[2].source_id, '0190aaaa-0000-7000-8000-000000000001');

  const emails = async (qs: string) => (await call(base, 'GET', `/suppressions?${qs}`, { token })).body.data.map((s: { email: string }) => s.email);
  t.same(await emails('origin=bounce'), ['bounced@beta.test']);
  t.same(await emails('origin=unsubscribe'), ['left@delta.test']);
  t.same(await emails('search=GAMMA'), ['Complainer%@Gamma.test'], 'search ignores case');
  t.same(await emails('search=%25'), ['Complainer%@Gamma.test'], '% is literal');
  t.same(await emails('search=_'), ['first_one@alpha.test'], '_ is literal');
  t.same(await emails('start_date=2026-04-02&end_date=2026-04-03'), ['Complainer%@Gamma.test', 'bounced@beta.test'], 'calendar dates cover whole days');
  t.same(await emails('start_date=2026-04-02T23:59:59Z&end_date=2026-04-03T00:00:00Z'), ['Complainer%@Gamma.test', 'bounced@beta.test'], 'instants are inclusive');
  t.same(await emails('end_date=2026-04-01T08:00:00.000Z'), ['first_one@alpha.test']);

  const page1 = await call(base, 'GET', '/suppressions?limit=3', { token });
  t.equal(page1.body.data.length, 3);
  t.equal(page1.body.has_more, true);
  const page2 = await call(base, 'GET', `/suppressions?limit=3&after=${page1.body.data[2].id}`, { token });
  t.same(page2.body.data.map((s: { id: string }) => s.id), [first.body.id]);
  t.equal(page2.body.has_more, false);

  for (const qs of ['origin=spam', 'search=', `search=${'x'.repeat(201)}`, 'start_date=yesterday', 'start_date=2026-02-30',
    'start_date=2026-04-03&end_date=2026-04-02', 'limit=0', 'limit=101']) {
    const r = await call(base, 'GET', `/suppressions?${qs}`, { token });
    t.equal(r.status, 422, qs);
    t.equal(r.body.name, 'invalid_parameter', qs);
  }
});

t.test('batch add is all-or-nothing and idempotent per address', async (t) => {
  const { token, teamId } = await app.newTeam('Batch');
  const existing = await call(base, 'POST', '/suppressions', { token, body: { email: 'old@example.com' } });
  const r = await call(base, 'POST', '/suppressions/batch/add', { token, body: { emails: ['a@example.com', 'OLD@example.com', 'b@example.com'] } });
  t.equal(r.status, 200);
  t.equal(r.body.data.length, 3);
  t.same(r.body.data.map((d: { object: string }) => d.object), ['suppression', 'suppression', 'suppression']);
  t.equal(r.body.data[1].id, existing.body.id);
  t.equal((await eventsOf(teamId, 'suppression.added')).length, 3, 'old + a + b');

  const bad = await call(base, 'POST', '/suppressions/batch/add', { token, body: { emails: ['c@example.com', 'nope'] } });
  t.equal(bad.status, 422);
  t.equal(bad.body.name, 'validation_error');
  t.match(bad.body.errors, [{ path: 'emails[1]' }]);
  t.equal((await call(base, 'GET', '/suppressions/c@example.com', { token })).status, 404, 'nothing of a refused batch is kept');
  for (const emails of [[], Array.from({ length: 101 }, (_, i) => `n${i}@example.com`)]) {
    const r = await call(base, 'POST', '/suppressions/batch/add', { token, body: { emails } });
    t.equal(r.status, 422, `${emails.length} items`);
  }
});

t.test('batch remove by emails or ids, one item per input', async (t) => {
  const { token, teamId } = await app.newTeam('Batch remove');
  const added = await call(base, 'POST', '/suppressions/batch/add', { token, body: { emails: ['x@example.com', 'y@example.com', 'z@example.com'] } });
  const [x, y, z] = added.body.data.map((d: { id: string }) => d.id);
  const byEmail = await call(base, 'POST', '/suppressions/batch/remove', { token, body: { emails: ['X@example.com', 'nobody@example.com'] } });
  t.same(byEmail.body.data, [{ object: 'suppression', id: x, deleted: true }, { object: 'suppression', id: null, deleted: false }]);
  const ghost = crypto.randomUUID();
  const byId = await call(base, 'POST', '/suppressions/batch/remove', { token, body: { ids: [y, ghost, z] } });
  t.same(byId.body.data, [{ object: 'suppression', id: y, deleted: true }, { object: 'suppression', id: ghost, deleted: false }, { object: 'suppression', id: z, deleted: true }]);
  t.same((await call(base, 'GET', '/suppressions', { token })).body.data, []);
  t.equal((await eventsOf(teamId, 'suppression.removed')).length, 3);
  for (const body of [{}, { emails: ['a@example.com'], ids: [x] }]) {
    const r = await call(base, 'POST', '/suppressions/batch/remove', { token, body });
    t.equal(r.status, 422, JSON.stringify(body));
    t.equal(r.body.name, 'validation_error');
  }
});

t.test('a sending_access key cannot reach suppressions', async (t) => {
  const { token } = await app.newTeam('Sender', 'sending_access');
  const r = await call(base, 'GET', '/suppressions', { token });
  t.equal(r.status, 401);
  t.equal(r.body.name, 'restricted_api_key');
});

t.test('core: isSuppressed and addSuppression (idempotent, event in the same transaction)', async (t) => {
  const { teamId } = await app.newTeam('Core');
  const repo = suppressionsRepo(db);
  t.equal(await isSuppressed(repo, teamId, 'eve@example.com'), undefined);
  const first = await inTransaction(db, (trx) => addSuppression(trx, teamId, 'Eve@Example.com', 'bounce', 'email-1', clock));
  t.equal(first.created, true);
  const second = await inTransaction(db, (trx) => addSuppression(trx, teamId, 'eve@example.com', 'complaint', 'email-2', clock));
  t.same(second, { id: first.id, created: false });
  t.same(await isSuppressed(repo, teamId, 'EVE@EXAMPLE.COM'), { origin: 'bounce', id: first.id }, 'the first origin stays');
  t.equal((await eventsOf(teamId, 'suppression.added')).length, 1);

  await t.rejects(inTransaction(db, async (trx) => {
    await addSuppression(trx, teamId, 'rolled@example.com', 'unsubscribe', null, clock);
    throw new Error('the caller fails after adding');
  }));
  t.equal(await isSuppressed(repo, teamId, 'rolled@example.com'), undefined, 'rolled back with the caller');
  t.equal((await eventsOf(teamId, 'suppression.added')).length, 1, 'and so is its event');
});

t.test('the resend SDK: suppressions add, get, list, remove, batch', async (t) => {
  const { token } = await app.newTeam('SDK');
  const resend = new Resend(token, { baseUrl: base });
  const added = await resend.suppressions.add({ email: 'sdk@example.com' });
  t.equal(added.error, null);
  t.equal(added.data?.object, 'suppression');
  const got = await resend.suppressions.get('sdk@example.com');
  t.equal(got.data?.id, added.data?.id);
  t.equal(got.data?.origin, 'manual');
  const listed = await resend.suppressions.list({ origin: 'manual', limit: 10 });
  t.equal(listed.error, null);
  t.same(listed.data?.data.map((s) => s.email), ['sdk@example.com']);
  const batch = await resend.suppressions.batch.add({ emails: ['b1@example.com', 'b2@example.com'] });
  t.equal(batch.data?.data.length, 2);
  const removedBatch = await resend.suppressions.batch.remove({ ids: batch.data!.data.map((d) => d.id) });
  t.same(removedBatch.data?.data.map((d) => d.deleted), [true, true]);
  const removed = await resend.suppressions.remove(added.data!.id);
  t.same(removed.data, { object: 'suppression', id: added.data!.id, deleted: true });
  const gone = await resend.suppressions.get(added.data!.id);
  t.equal(gone.error?.name, 'not_found');
});
