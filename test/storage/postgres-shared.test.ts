import t from 'tap';
import { sql } from 'kysely';
import { newId } from '../../core/ids.js';
import { metricsRollup } from '../../core/metrics/index.js';
import type { Db } from '../../storage/sql/index.js';
import { emailsRepo } from '../../storage/repos/index.js';
import { changeRecipient, dueRecipients } from '../../storage/repos/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { groupCommit } from '../../storage/sql/index.js';
import { idempotencyRepo, isUniqueViolation } from '../../storage/repos/index.js';
import { metricsQueryRepo, metricsRollupRepo } from '../../storage/repos/index.js';
import { receivedRepo } from '../../storage/repos/index.js';
import { retentionRepo } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { webhooksRepo } from '../../storage/repos/index.js';
import { inRelaxedWriteTransaction, inWriteTransaction } from '../../storage/sql/index.js';
import { waitFor, withDeadline } from '../helpers/deadline.js';
import { fakeEmail, writeEmailEvent } from '../helpers/metrics-fixtures.js';
import { emailRow, iso, openPgFixture, receivedRow, recipientRow } from '../helpers/pg-rows.js';

// The repositories whose correctness rested on SQLite's single writer, on a PostgreSQL shared by
// two pools (two processes): claims, the outbox order, the rollup cursor, idempotency. Plus the
// remaining round trips (emails, received, metrics, retention) and the write-transaction path.
const fixture = await openPgFixture();
t.teardown(() => fixture.close());
const db = fixture.database.db;
const second = await fixture.other();
const otherDb = second.db;

/** Resolves once some session of this database waits for a lock (polled: no timing assumed). */
async function someoneWaitsForALock(): Promise<void> {
  await waitFor('a session of the test database to wait for a lock', async () => {
    const r = await sql<{ n: number }>`select count(*) as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
    return r.rows[0]!.n > 0;
  }, 60_000, 5);
}

/** A promise and its resolver. */
function gate(): { open(): void; wait: Promise<void> } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => { open = resolve; });
  return { open, wait };
}

t.test('write transactions: commit, roll back, relaxed commits turn synchronous_commit off for themselves', async (t) => {
  const teamId = newId();
  const setting = async (trx: Db) => (await sql<{ s: string }>`select current_setting('synchronous_commit') as s`.execute(trx)).rows[0]!.s;
  t.equal(await inWriteTransaction(db, setting), 'on', 'a durable commit keeps the server default');
  t.equal(await inRelaxedWriteTransaction(db, setting), 'off', 'a relaxed one is off inside its transaction');
  t.equal(await inWriteTransaction(db, setting), 'on', 'and only there (SET LOCAL)');
  await t.rejects(inWriteTransaction(db, async (trx) => {
    await trx.insertInto('teams').values({ id: teamId, name: 'x', status: 'active', created_at: iso() }).execute();
    throw new Error('boom');
  }), /boom/);
  t.equal(await db.selectFrom('teams').select('id').where('id', '=', teamId).executeTakeFirst(), undefined, 'nothing of a failed one stays');
});

t.test('group commit: one bad write does not sink the others', async (t) => {
  const commits = groupCommit(db, { windowMs: 5 });
  const ids = [newId(), newId(), newId()];
  const results = await Promise.allSettled([
    commits.run((trx) => trx.insertInto('teams').values({ id: ids[0]!, name: 'a', status: 'active', created_at: iso() }).execute()),
    commits.run((trx) => trx.insertInto('teams').values({ id: ids[0]!, name: 'duplicate', status: 'active', created_at: iso() }).execute()),
    commits.run((trx) => trx.insertInto('teams').values({ id: ids[1]!, name: 'b', status: 'active', created_at: iso() }).execute()),
  ]);
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled'], 'only the duplicate fails (its transaction aborted, the rest retried alone)');
  t.equal((await db.selectFrom('teams').select('id').where('id', 'in', ids).execute()).length, 2);
});

t.test('emails: accepted with attachment bytes, list search, bulk sums', async (t) => {
  const repo = emailsRepo(db);
  const email = emailRow(newId(), { recipients_text: 'BOB@example.net', subject: 'Ünïcode Hello', attachment_count: 1 });
  const content = Buffer.from([0, 1, 2, 255, 254]);
  await repo.insertAccepted({
    email, recipients: [recipientRow(email, 0)], tags: [{ email_id: email.id, team_id: email.team_id, name: 'kind', value: 'welcome' }],
    attachments: [{ id: newId(), email_id: email.id, team_id: email.team_id, idx: 0, filename: 'a.bin', content_type: 'application/octet-stream', content_id: null, disposition: 'attachment', size: 5, content }],
  });
  t.same((await repo.attachments(email.id))[0]!.content, content, 'bytea round trip, bytes intact');
  t.same((await repo.byId(email.team_id, email.id))?.subject, 'Ünïcode Hello');
  t.same((await repo.list(email.team_id, { search: 'bob@' }, { limit: 10 })).data.map((e) => e.id), [email.id], 'recipients match whatever their case');
  t.same((await repo.list(email.team_id, { search: 'ünïcode' }, { limit: 10 })).data.map((e) => e.id), [email.id], 'the subject folds through svc_casefold');
  t.same((await repo.list(email.team_id, { tags: [{ name: 'kind', value: 'welcome' }] }, { limit: 10 })).data.map((e) => e.id), [email.id]);
  t.equal(await repo.bulkRecipients(email.team_id, 'h', '2000-01-01T00:00:00.000Z'), 1, 'a sum comes back as a number');
  t.ok(await repo.recordBulkWarning(email.team_id, 'h', '2026-01-01', iso()));
  t.notOk(await repo.recordBulkWarning(email.team_id, 'h', '2026-01-01', iso()), 'once per day');
});

t.test('the outbound queue on a shared database: due rows, and a state change with one winner', async (t) => {
  const email = emailRow(newId(), { region: 'pg-claim' });
  const rows = Array.from({ length: 60 }, (_, i) => recipientRow(email, i));
  await emailsRepo(db).insertAccepted({ email, recipients: rows, tags: [], attachments: [] });
  t.equal((await dueRecipients(db, ['pg-claim'], iso(), 100, [])).length, 60, 'all due');
  t.equal((await dueRecipients(otherDb, ['pg-claim'], iso(), 100, [])).length, 60, 'seen alike from the other pool');
  const target = rows[0]!.id;
  const outcomes = await Promise.all([db, otherDb].map((d) => inWriteTransaction(d, (trx) => changeRecipient(trx, target, ['queued'], { state: 'delivered' }, iso()))));
  t.same(outcomes.sort(), [false, true], 'a conditional state change has one winner');
  t.equal((await dueRecipients(db, ['pg-claim'], iso(), 100, [])).length, 59, 'and the row is no longer due');
});

t.test('webhook claims from two pools never share a message', async (t) => {
  const repos = [webhooksRepo(db), webhooksRepo(otherDb)];
  const endpointId = newId();
  await repos[0]!.insertEndpoint({ id: endpointId, team_id: newId(), url: 'https://hook.example', events: '["email.sent"]', status: 'enabled', secret_sealed: 's', previous_secret_sealed: null, previous_secret_expires_at: null, from_seq: 0, disabled_reason: null, created_at: iso(), updated_at: iso() });
  const deliveries = Array.from({ length: 40 }, (_, i) => ({
    id: newId(), team_id: newId(), endpoint_id: endpointId, event_id: newId(), event_seq: i + 1, event_type: 'email.sent', status: 'pending' as const,
    attempts_made: 0, next_attempt_at: iso(Date.now() - 1000), lease_until: null, lease_owner: null, replay: 0, last_status_code: null, last_error: null, created_at: iso(), updated_at: iso(),
  }));
  await repos[0]!.insertDeliveries(deliveries);
  await repos[0]!.insertDeliveries(deliveries.slice(0, 5).map((d) => ({ ...d, id: newId() })));
  t.equal((await repos[0]!.listDeliveries(endpointId, { limit: 100 })).data.length, 40, 'a repeated fan-out inserts nothing new');
  t.same(await repos[0]!.dueEndpointIds(iso(), 10), [endpointId]);
  const got: string[] = [];
  for (let round = 0; round < 20; round++) {
    const claims = await Promise.all(repos.map((repo, i) => inWriteTransaction(i === 0 ? db : otherDb, (trx) => webhooksRepo(trx).claim(endpointId, iso(), `owner-${i}`, iso(Date.now() + 60_000), 6))));
    got.push(...claims.flat().map((d) => d.id));
    if (claims.flat().length === 0) break;
  }
  t.equal(got.length, 40, 'every message claimed');
  t.equal(new Set(got).size, 40, 'none by both');
  t.ok(await repos[0]!.finishClaimed(got[0]!, (await repos[0]!.delivery(endpointId, got[0]!))!.lease_owner!, { status: 'succeeded', updated_at: iso() }));
  await repos[1]!.setCursor('webhooks', 12);
  t.equal(await repos[0]!.cursor('webhooks'), 12, 'the cursor is a number');
});

t.test('events commit in seq order: a later writer waits for the earlier one', async (t) => {
  const team = newId();
  const firstHolds = gate();
  const first = inTransaction(db, async (trx) => {
    await eventsRepo(trx).insert({ id: newId(), team_id: team, type: 'first', created_at: iso(), data: '{}' });
    await firstHolds.wait;
  });
  // Wait until the first transaction holds the outbox lock (its event is inserted).
  await waitFor('the first transaction to hold the outbox lock', async () => {
    const r = await sql<{ n: number }>`select count(*) as n from pg_locks
      where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`.execute(otherDb);
    return r.rows[0]!.n > 0;
  }, 60_000, 5);
  let secondDone = false;
  const later = eventsRepo(otherDb).insert({ id: newId(), team_id: team, type: 'second', created_at: iso(), data: '{}' }).then(() => { secondDone = true; });
  await someoneWaitsForALock();
  t.notOk(secondDone, 'the second insert waits while the first transaction is open');
  firstHolds.open();
  await withDeadline('both event inserts to commit', Promise.all([first, later]), 60_000);
  const rows = await db.selectFrom('events').select(['seq', 'type']).where('team_id', '=', team).orderBy('seq').execute();
  t.same(rows.map((r) => r.type), ['first', 'second'], 'seq order is commit order');
});

t.test('metrics: the rollup cursor is locked, so two processes never count an event twice', async (t) => {
  const teamId = newId();
  const at = '2026-03-01T10:00:00.000Z';
  for (let i = 0; i < 30; i++) await writeEmailEvent(i % 2 ? db : otherDb, teamId, 'email.sent', fakeEmail(), at);
  const holder = gate();
  const locked = gate();
  const held = inTransaction(db, async (trx) => {
    await metricsRollupRepo(trx).lockCursor('pg-test');
    locked.open();
    await holder.wait;
    await metricsRollupRepo(trx).setCursor('pg-test', 7);
  });
  // The second starts only once the first holds the cursor: started any sooner, it could take the
  // lock first on a loaded machine, and then nobody would ever wait.
  await withDeadline('the first transaction to lock the rollup cursor', locked.wait, 60_000);
  const waiting = inTransaction(otherDb, async (trx) => {
    await metricsRollupRepo(trx).lockCursor('pg-test');
    return metricsRollupRepo(trx).cursor('pg-test');
  });
  await someoneWaitsForALock();
  holder.open();
  await withDeadline('the first rollup transaction to commit', held, 60_000);
  t.equal(await withDeadline('the second rollup transaction to read the cursor', waiting, 60_000), 7, 'the second reads the cursor only after the first committed');

  const rollups = [metricsRollup({ db, batchSize: 4 }), metricsRollup({ db: otherDb, batchSize: 4 })];
  await Promise.all(rollups.map((r) => r.catchUp()));
  const minute = Math.floor(Date.parse(at) / 60_000);
  const rows = await metricsQueryRepo(db).aggregate({ teamId, fromMinute: minute, toMinute: minute + 1, perEmail: false, broadcastsOnly: false, group: { domain: false, email: false, broadcast: false } });
  t.equal(rows.reduce((n, r) => n + r.sent, 0), 30, 'each of 30 events counted once by two rollups racing');
  t.equal(typeof rows[0]!.sent, 'number');
  const none = await metricsQueryRepo(db).aggregate({ teamId, fromMinute: minute, toMinute: minute + 1, perEmail: false, domainIds: [], broadcastsOnly: false, group: { domain: false, email: false, broadcast: false } });
  t.same(none, [], 'an empty filter matches nothing');
});

t.test('idempotency: two pools committing the same key, one unique violation', async (t) => {
  const row = { team_id: newId(), key: 'k-1', request_hash: 'h', response_status: 200, response_body: '{}', created_at: iso(), expires_at: iso(Date.now() + 86_400_000) };
  const results = await Promise.allSettled([db, otherDb].map((d) => inWriteTransaction(d, (trx) => idempotencyRepo(trx).insert(row))));
  const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
  t.equal(refused.length, 1, 'one of the two commits');
  t.ok(isUniqueViolation(refused[0]!.reason), 'the loser is recognised as a unique violation');
  t.equal((await idempotencyRepo(db).find(row.team_id, 'k-1', iso()))?.request_hash, 'h');
  t.equal(await idempotencyRepo(db).prune(iso(Date.now() + 2 * 86_400_000)), 1, 'pruned after expiry');
});

t.test('received mail and retention', async (t) => {
  const repo = receivedRepo(db);
  const teamId = newId();
  const kept = receivedRow(teamId, { search_text: 'quarterly report from zed' });
  const dropped = receivedRow(teamId, { dropped_reason: 'virus', created_at: '2020-01-01T00:00:00.000Z' });
  await repo.insert(kept, [{ id: newId(), email_id: kept.id, team_id: teamId, position: 0, filename: 'r.pdf', content_type: 'application/pdf', content_id: null, content_disposition: 'attachment', size: 10, checksum: 'c' }]);
  await repo.insert(dropped, []);
  await repo.addUsage(teamId, 3_000_000_000, 1);
  t.equal(await repo.keptBytes(teamId), 3_000_001_234, 'usage is 64-bit and a number');
  t.equal(await repo.keptSince(teamId, '2000-01-01T00:00:00.000Z'), 1, 'only kept mail counts');
  t.same((await repo.list(teamId, { search: 'QUARTERLY' }, { limit: 10 })).data.map((r) => r.id), [kept.id]);
  t.equal((await repo.attachmentsOf([kept.id])).length, 1);

  const retention = retentionRepo(db);
  t.same((await retention.droppedBefore('2021-01-01T00:00:00.000Z', 10, { except: [] })).map((r) => r.id), [dropped.id]);
  t.equal(await retention.deleteDropped([dropped.id, kept.id]), 1, 'only the dropped record goes');
  t.same([...(await retention.rawKeysOf([kept.id, dropped.id])).keys()], [kept.id]);
  const events = eventsRepo(db);
  for (let i = 0; i < 3; i++) await events.insert({ id: newId(), team_id: teamId, type: 'old', created_at: '2020-01-01T00:00:00.000Z', data: '{}' });
  const last = (await events.after(0, 100_000)).at(-1)!.seq;
  const between = await retention.eventsBetween(0, last, 100_000);
  t.ok(between.length >= 3 && between.every((e) => typeof e.seq === 'number'));
  t.ok(await retention.deleteUnreferencedEvents(0, last, '2021-01-01T00:00:00.000Z') >= 3, 'old unreferenced events pruned');
  t.equal(typeof await retention.lowestCursor(['webhooks', 'metrics-rollup']), 'number');
});
