import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '../../storage/sql/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import { compiledInsert } from '../../storage/sql/index.js';
import { executeRead } from '../../storage/sql/index.js';
import { paginate } from '../../storage/sql/index.js';
import { withDeadline } from '../helpers/deadline.js';

// The raw better-sqlite3 paths (raw-sqlite.ts) must keep what Kysely's way guarantees: a read never
// sees, nor lands inside, a write transaction that holds the connection; compiled statements run
// inside a held transaction commit and roll back with it.
const dir = mkdtempSync(join(tmpdir(), 'svc-raw-sqlite-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'FULL' });
t.teardown(() => database.close());
const db = database.db;
const team = (id: string) => ({ id, name: id, status: 'active' as const, created_at: '2026-11-22T00:00:00.000Z' });
const insertTeam = compiledInsert<ReturnType<typeof team>>(db, 'teams', ['id', 'name', 'status', 'created_at']);
const teamIds = async () => (await executeRead(db, db.selectFrom('teams').select('id').orderBy('id'))).map((r) => r.id);

t.test('a read while a write transaction holds the connection waits for its commit', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  const write = inWriteTransaction(db, async (trx) => {
    await insertTeam(trx, team('team-held'));
    await gate;
  });
  await sleep(20);
  let read: string[] | undefined;
  const reading = teamIds().then((ids) => { read = ids; });
  await sleep(50);
  t.equal(read, undefined, 'the read has not run inside the open transaction');
  release();
  await withDeadline('the held write to commit and the read after it', Promise.all([write, reading]));
  t.same(read, ['team-held'], 'it ran after the commit and sees the row');
});

t.test('compiled statements in a held transaction roll back with it', async (t) => {
  await t.rejects(inWriteTransaction(db, async (trx) => {
    await insertTeam(trx, team('team-rolled-back'));
    throw new Error('fail after the insert');
  }), /fail after the insert/);
  t.same(await teamIds(), ['team-held'], 'the insert is gone');
  t.equal(database.sqlite.inTransaction, false, 'and no transaction is left open');
});

t.test('a raw read answers as the query builder does, pages included', async (t) => {
  for (const id of ['team-a1', 'team-a2', 'team-a3']) await inWriteTransaction(db, (trx) => insertTeam(trx, team(id)));
  const viaKysely = (await db.selectFrom('teams').select('id').orderBy('id').execute()).map((r) => r.id);
  t.same(await teamIds(), viaKysely);
  const first = await paginate(db, db.selectFrom('teams').select('id'), 'id', { limit: 2 });
  t.same(first.data.map((r) => r.id), ['team-held', 'team-a3']);
  t.equal(first.has_more, true);
  const next = await paginate(db, db.selectFrom('teams').select('id'), 'id', { limit: 2, after: 'team-a3' });
  t.same(next.data.map((r) => r.id), ['team-a2', 'team-a1']);
  t.equal(next.has_more, false);
});
