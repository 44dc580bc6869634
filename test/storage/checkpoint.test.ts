import t from 'tap';
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../storage/sql/index.js';
import { waitFor, withDeadline } from '../helpers/deadline.js';

// The WAL is checkpointed by a thread of its own, not inside some request's COMMIT: after more than
// 4 MiB of commits the pages reach the database file although this connection's own threshold
// (wal_autocheckpoint, 40 MiB) was never crossed.
const dir = mkdtempSync(join(tmpdir(), 'svc-checkpoint-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'svc.sqlite');
const database = await openDatabase({ path, synchronous: 'FULL' });
t.teardown(() => database.close());

t.test('the checkpoint thread copies the WAL into the database file', async (t) => {
  t.equal(database.sqlite.pragma('page_size', { simple: true }), 16384, 'a new file has 16 KiB pages');
  t.equal(database.sqlite.pragma('wal_autocheckpoint', { simple: true }), 2560, 'the connection itself waits for 40 MiB');
  const before = statSync(path).size;
  const insert = database.sqlite.prepare('insert into teams (id, name, status, created_at) values (?, ?, ?, ?)');
  const filler = 'x'.repeat(2000);
  database.sqlite.transaction(() => {
    for (let i = 0; i < 3000; i++) insert.run(`team-${i}`, `${filler}${i}`, 'active', new Date().toISOString());
  })();
  t.ok(statSync(`${path}-wal`).size > 4 * 1024 * 1024, 'over 4 MiB of WAL');
  t.ok(statSync(path).size - before < 1024 * 1024, 'the commit itself checkpointed nothing');
  const grownBy = () => statSync(path).size - before;
  const grown = await waitFor('the WAL pages to reach the database file', async () => grownBy() >= 5 * 1024 * 1024 && grownBy(), 30_000, 100)
    .catch(() => grownBy());
  t.ok(grown >= 5 * 1024 * 1024, `the pages reached the database file (${(grown / 1024 / 1024).toFixed(1)} MiB)`);
});

// A file an older svc made keeps its 4 KiB pages (the size changes only by rebuilding the file),
// and its threshold is still 40 MiB.
t.test('a database made with 4 KiB pages keeps them', async (t) => {
  const older = join(dir, 'older.sqlite');
  const made = new BetterSqlite3(older);
  made.pragma('journal_mode = WAL');
  made.exec('create table kept (a)');
  made.close();
  const database = await openDatabase({ path: older, synchronous: 'FULL' });
  try {
    t.equal(database.sqlite.pragma('page_size', { simple: true }), 4096);
    t.equal(database.sqlite.pragma('wal_autocheckpoint', { simple: true }), 10240);
    t.same(database.sqlite.prepare('select count(*) as n from kept').get(), { n: 0 }, 'its tables are there');
  } finally {
    await database.close();
  }
});

t.test('closing the database stops the thread', async (t) => {
  // Counted as the kernel sees them: the checkpoint worker is unref'd, so a thread that outlived
  // close() would not keep the process alive and would otherwise go unnoticed.
  const threads = () => readdirSync('/proc/self/task').length;
  await stat(dir); // the libuv thread pool starts on first use: started now, it does not count below
  const before = threads();
  const other = await openDatabase({ path: join(dir, 'other.sqlite'), synchronous: 'FULL' });
  t.equal(threads(), before + 1, 'an open database runs one more thread: its checkpointer');
  await withDeadline('the database to close', other.close(), 20_000);
  const after = await waitFor('the checkpoint thread to end', async () => (threads() === before ? before : undefined), 20_000)
    .catch(() => threads());
  t.equal(after, before, 'closed: the thread is gone');
});
