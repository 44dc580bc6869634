import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { BUSY_TIMEOUT_MS, walSyncOf, type Db } from './db.js';
import { isPostgres } from './dialect.js';
import { txStatements, type TxStatements } from './tx-statements.js';
import { holdRaw } from './raw-sqlite.js';

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
 *
 * On PostgreSQL it is a plain transaction (postgresTransaction below).
 */
export function inWriteTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return writeTransaction(db, fn, false);
}

/**
 * inWriteTransaction without its own fsync (synchronous=NORMAL for this commit only): for records
 * whose loss in a crash only makes svc more cautious, never wrong (delivery outcomes), or costs no
 * mail (request logs, keys' last-used times). Its WAL frames become durable with the next durable
 * commit's fsync of the WAL.
 */
export function inRelaxedWriteTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return writeTransaction(db, fn, true);
}

const BUSY = Symbol('busy');

async function writeTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>, relaxed: boolean): Promise<T> {
  if (isPostgres(db)) return postgresTransaction(db, fn, relaxed);
  const walSync = relaxed ? undefined : walSyncOf(db);
  const value = await lockedTransaction(db, fn, relaxed || walSync !== undefined);
  await walSync?.sync();
  return value;
}

async function lockedTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>, relaxed: boolean): Promise<T> {
  const giveUpAt = Date.now() + BUSY_TIMEOUT_MS;
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 25)) {
    const outcome = await db.connection().execute(async (conn) => {
      const release = holdRaw(db, conn);
      try {
        return await attempt(conn, txStatements(db, conn), fn, relaxed);
      } finally {
        release();
      }
    });
    if (outcome !== BUSY) return outcome.value;
    if (Date.now() >= giveUpAt) throw Object.assign(new Error('database is locked (write lock not free within the busy timeout)'), { code: 'SQLITE_BUSY' });
    await sleep(pauseMs);
  }
}

/** One try on the held connection: BUSY when another process holds the write lock. */
async function attempt<T>(conn: Db, tx: TxStatements, fn: (trx: Db) => Promise<T>, relaxed: boolean): Promise<{ value: T } | typeof BUSY> {
  // synchronous cannot change inside a transaction: set before BEGIN, put back after the end.
  const level = relaxed ? await tx.synchronous() : undefined;
  if (level !== undefined) await tx.setSynchronous(NORMAL);
  try {
    if (!(await tryBeginImmediate(tx))) return BUSY;
    try {
      const value = await fn(conn);
      await tx.run('commit');
      return { value };
    } catch (err) {
      await tx.run('rollback').catch(() => undefined);
      throw err;
    }
  } finally {
    if (level !== undefined) await tx.setSynchronous(level);
  }
}

const NORMAL = 1;

async function tryBeginImmediate(tx: TxStatements): Promise<boolean> {
  await tx.setBusyTimeout(0);
  try {
    await tx.run('begin immediate');
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return false;
    throw err;
  } finally {
    await tx.setBusyTimeout(BUSY_TIMEOUT_MS);
  }
}

/** SQLSTATEs after which PostgreSQL rolled the transaction back and running it again may succeed. */
const RETRYABLE = new Set(['40P01', '40001']);
const PG_ATTEMPTS = 5;

/**
 * On PostgreSQL writers do not queue for one lock: rows are locked as they are written, and the
 * commit is durable with synchronous_commit on (the server's default), so there is no WAL of ours
 * to fsync. A relaxed commit turns synchronous_commit off for itself only (SET LOCAL): its loss in
 * a server crash is what a relaxed commit allows. A deadlock with another process's transaction
 * (PostgreSQL aborts one of the two) runs the work again, as a busy SQLite lock waits.
 */
async function postgresTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>, relaxed: boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        if (relaxed) await sql`set local synchronous_commit = off`.execute(trx);
        return fn(trx);
      });
    } catch (err) {
      if (attempt >= PG_ATTEMPTS || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
      await sleep(attempt * 5);
    }
  }
}
