import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase, sharedGroupCommit, walSyncOf, type Db } from '../../storage/sql/index.js';

// The delivery side's shared group commit: a durable write (the submitting mark) and a relaxed
// one (an outcome) asked for in the same loop turn commit as ONE durable transaction; relaxed
// writes alone commit without a WAL fsync, after lingering for a durable one to ride on; a failing
// write sinks none of the others.
const dir = mkdtempSync(join(tmpdir(), 'svc-group-commit-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'FULL' });
t.teardown(() => database.close());
const db = database.db;
const walSync = walSyncOf(db)!;
let fsyncs = 0;
const sync = walSync.sync.bind(walSync);
walSync.sync = () => { fsyncs++; return sync(); };
const team = (id: string) => (trx: Db) => trx.insertInto('teams').values({ id, name: id, status: 'active', created_at: new Date().toISOString() }).execute().then(() => trx);
const teams = async () => (await db.selectFrom('teams').select('id').orderBy('id').execute()).map((r) => r.id);

t.test('durable and relaxed writes of one loop turn share one durable transaction', async (t) => {
  const { durable, relaxed } = sharedGroupCommit(db);
  const before = fsyncs;
  const [a, b, c] = await Promise.all([relaxed.run(team('t-1')), durable.run(team('t-2')), relaxed.run(team('t-3'))]);
  t.equal(a, b, 'the same transaction');
  t.equal(b, c, 'the same transaction');
  t.equal(fsyncs - before, 1, 'one WAL fsync for all three, before they resolved');
  t.same(await teams(), ['t-1', 't-2', 't-3']);
});

t.test('relaxed writes alone commit without a WAL fsync', async (t) => {
  const { relaxed } = sharedGroupCommit(db);
  const before = fsyncs;
  await Promise.all([relaxed.run(team('t-4')), relaxed.run(team('t-5'))]);
  t.equal(fsyncs - before, 0);
  t.same((await teams()).slice(-2), ['t-4', 't-5']);
});

t.test('a failing write is retried alone: the others still commit, each with its own durability', async (t) => {
  const { durable, relaxed } = sharedGroupCommit(db);
  const bad = durable.run(team('t-1'));
  const results = await Promise.allSettled([relaxed.run(team('t-6')), bad, durable.run(team('t-7'))]);
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  t.same((await teams()).slice(-2), ['t-6', 't-7']);
});

t.test('a relaxed write lingers for the next durable write and rides in its transaction', async (t) => {
  const { durable, relaxed } = sharedGroupCommit(db, { lingerMs: 5_000 });
  const before = fsyncs;
  const outcome = relaxed.run(team('t-8'));
  await sleep(30);
  t.notOk((await teams()).includes('t-8'), 'not committed on its own while it lingers');
  const mark = durable.run(team('t-9'));
  t.equal(await outcome, await mark, 'the same transaction');
  t.equal(fsyncs - before, 1, 'one WAL fsync for both');
});

t.test('a relaxed write with no durable one to ride on commits when its linger ends', async (t) => {
  const { relaxed } = sharedGroupCommit(db, { lingerMs: 200 });
  const before = fsyncs;
  const outcome = relaxed.run(team('t-10'));
  await sleep(30);
  t.notOk((await teams()).includes('t-10'), 'still lingering');
  await outcome;
  t.ok((await teams()).includes('t-10'));
  t.equal(fsyncs - before, 0, 'without a WAL fsync');
});
