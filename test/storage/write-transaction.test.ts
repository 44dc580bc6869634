import t from 'tap';
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase, walSyncOf } from '../../storage/sql/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import { WalSync } from '../../storage/sql/index.js';

// The write path of sending and receiving: waiting for another process's write lock must not stall
// the event loop (SQLite's busy handler sleeps on it), and a durable commit resolves only after an
// fsync of the WAL that began after the commit.
const dir = mkdtempSync(join(tmpdir(), 'svc-write-tx-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'svc.sqlite');
const database = await openDatabase({ path, synchronous: 'FULL' });
t.teardown(() => database.close());
const db = database.db;
const count = async () => Number((await db.selectFrom('teams').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

t.test('waiting for another connection\'s write lock leaves the event loop free', async (t) => {
  const other = new BetterSqlite3(path);
  t.teardown(() => other.close());
  other.prepare('begin immediate').run();
  let ticks = 0;
  const ticker = setInterval(() => { ticks++; }, 5);
  const write = inWriteTransaction(db, (trx) => trx.insertInto('teams').values({ id: 'team-wait', name: 'Waited', status: 'active', created_at: new Date().toISOString() }).execute());
  let done = false;
  void write.then(() => { done = true; });
  await sleep(300);
  t.notOk(done, 'the write waits while the other connection holds the lock');
  t.ok(ticks >= 20, `timers kept firing meanwhile (${ticks} ticks of 5 ms in 300 ms)`);
  other.prepare('commit').run();
  await write;
  clearInterval(ticker);
  t.equal(await count(), 1, 'and commits once the lock is free');
});

t.test('a failed write rolls back and leaves the lock free', async (t) => {
  await t.rejects(inWriteTransaction(db, async (trx) => {
    await trx.insertInto('teams').values({ id: 'team-rollback', name: 'Rolled back', status: 'active', created_at: new Date().toISOString() }).execute();
    throw new Error('boom');
  }), /boom/);
  t.equal(await count(), 1, 'nothing of it is kept');
  const other = new BetterSqlite3(path);
  t.teardown(() => other.close());
  t.doesNotThrow(() => other.prepare('begin immediate').run(), 'another connection can take the write lock');
  other.prepare('rollback').run();
});

t.test('a durable write resolves after an fsync of the WAL that began after its commit', async (t) => {
  const walSync = walSyncOf(db);
  t.ok(walSync, 'a FULL database has its WAL fsync');
  const calls: string[] = [];
  const original = walSync!.sync.bind(walSync);
  walSync!.sync = async () => {
    calls.push(`sync after ${await count()} rows`);
    await original();
    calls.push('synced');
  };
  t.teardown(() => { walSync!.sync = original; });
  await inWriteTransaction(db, (trx) => trx.insertInto('teams').values({ id: 'team-durable', name: 'Durable', status: 'active', created_at: new Date().toISOString() }).execute());
  t.same(calls, ['sync after 2 rows', 'synced'], 'the fsync started after the commit, and the write resolved after it');
});

t.test('WalSync: concurrent callers share fsyncs, each waiting for one that began after its call', async (t) => {
  const wal = `${path}-wal`;
  t.ok(statSync(wal).size > 0, 'the WAL exists');
  const sync = new WalSync(wal);
  t.teardown(() => sync.close());
  const order: number[] = [];
  await Promise.all([1, 2, 3, 4].map((n) => sync.sync().then(() => order.push(n))));
  t.same(order.sort(), [1, 2, 3, 4], 'every caller resolves');
  const missing = new WalSync(join(dir, 'absent-wal'));
  await t.rejects(missing.sync(), { code: 'ENOENT' }, 'a WAL that cannot be opened is an error, never a silent success');
});
