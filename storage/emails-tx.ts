import { sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import { BUSY_TIMEOUT_MS, walSyncOf, type Db } from './db.js';
import { withRelaxedSync } from './transaction.js';

/**
 * A transaction that takes SQLite's write lock at BEGIN (BEGIN IMMEDIATE). The delivery side's
 * transactions read a row and then write it; as a deferred transaction such an upgrade fails at
 * once with "database is locked" when another process (the API) committed meanwhile — SQLite
 * cannot wait there without risking a deadlock. Taking the lock first makes waiting safe.
 *
 * The wait for the lock is asynchronous: SQLite's own busy handler sleeps on the event loop, which
 * stalled every SMTP session and HTTP request of the process while another process committed
 * (a third of the outbound process's time in the send benchmark). Here BEGIN IMMEDIATE is tried
 * without a busy timeout, and on SQLITE_BUSY the connection is released and tried again after a
 * short timer, for as long as busy_timeout would have waited. Likewise its fsync: it commits with
 * synchronous=NORMAL and resolves only after the WAL's fsync, run off the event loop (wal-sync.ts).
 */
export function inWriteTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return writeTransaction(db, fn, false);
}

/**
 * inWriteTransaction without its own fsync (synchronous=NORMAL for this commit only): for records
 * whose loss in a crash only makes svc more cautious, never wrong. Its WAL frames become durable
 * with the next ordinary (FULL) commit.
 */
export function inRelaxedWriteTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return writeTransaction(db, fn, true);
}

const BUSY = Symbol('busy');

async function writeTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>, relaxed: boolean): Promise<T> {
  const walSync = relaxed ? undefined : walSyncOf(db);
  const value = await lockedTransaction(db, fn, relaxed || walSync !== undefined);
  await walSync?.sync();
  return value;
}

async function lockedTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>, relaxed: boolean): Promise<T> {
  const giveUpAt = Date.now() + BUSY_TIMEOUT_MS;
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 25)) {
    const outcome = await db.connection().execute((conn) => (relaxed ? withRelaxedSync(conn, () => attempt(conn, fn)) : attempt(conn, fn)));
    if (outcome !== BUSY) return outcome.value;
    if (Date.now() >= giveUpAt) throw Object.assign(new Error('database is locked (write lock not free within the busy timeout)'), { code: 'SQLITE_BUSY' });
    await sleep(pauseMs);
  }
}

async function attempt<T>(conn: Db, fn: (trx: Db) => Promise<T>): Promise<{ value: T } | typeof BUSY> {
  if (!(await tryBeginImmediate(conn))) return BUSY;
  try {
    const value = await fn(conn);
    await sql`commit`.execute(conn);
    return { value };
  } catch (err) {
    await sql`rollback`.execute(conn).catch(() => undefined);
    throw err;
  }
}

async function tryBeginImmediate(conn: Db): Promise<boolean> {
  await sql`pragma busy_timeout = 0`.execute(conn);
  try {
    await sql`begin immediate`.execute(conn);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return false;
    throw err;
  } finally {
    await sql.raw(`pragma busy_timeout = ${BUSY_TIMEOUT_MS}`).execute(conn);
  }
}
