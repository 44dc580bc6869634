import { sql } from 'kysely';
import type { Db } from './db.js';
import { withRelaxedSync } from './transaction.js';

/**
 * A transaction that takes SQLite's write lock at BEGIN (BEGIN IMMEDIATE). The delivery side's
 * transactions read a row and then write it; as a deferred transaction such an upgrade fails at
 * once with "database is locked" when another process (the API) committed meanwhile — SQLite
 * cannot wait there without risking a deadlock. Taking the lock first lets busy_timeout wait.
 */
export async function inWriteTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.connection().execute((conn) => immediateTransaction(conn, fn));
}

/**
 * inWriteTransaction without its own fsync (synchronous=NORMAL for this commit only): for records
 * whose loss in a crash only makes svc more cautious, never wrong. Its WAL frames become durable
 * with the next ordinary (FULL) commit.
 */
export async function inRelaxedWriteTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.connection().execute((conn) => withRelaxedSync(conn, () => immediateTransaction(conn, fn)));
}

async function immediateTransaction<T>(conn: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  await sql`begin immediate`.execute(conn);
  try {
    const result = await fn(conn);
    await sql`commit`.execute(conn);
    return result;
  } catch (err) {
    await sql`rollback`.execute(conn).catch(() => undefined);
    throw err;
  }
}
