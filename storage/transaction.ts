import { sql } from 'kysely';
import type { Db } from './db.js';

/**
 * Runs `fn` in one SQLite transaction: the repos it builds from `trx` commit or roll back together.
 * With synchronous=FULL the commit is fsynced before this resolves.
 */
export function inTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute((trx) => fn(trx));
}

/**
 * A transaction for records that may be lost in a crash (request logs, last-used times): it commits
 * without its own fsync. Its WAL frames become durable with the next ordinary commit, which fsyncs
 * the whole WAL. The connection is held for the whole step, so no other commit can slip in while
 * the setting is relaxed; a blocking fsync on the event loop five times a second was the single
 * largest cost of the request log.
 */
export async function inRelaxedTransaction(db: Db, fn: (trx: Db) => Promise<void>): Promise<void> {
  await db.connection().execute((conn) => withRelaxedSync(conn, () => conn.transaction().execute((trx) => fn(trx))));
}

/**
 * Runs `step` on a held connection with synchronous=NORMAL, then puts back the level it found. The
 * caller holds the connection (db.connection()), so no other commit runs while it is relaxed.
 */
export async function withRelaxedSync<T>(conn: Db, step: () => Promise<T>): Promise<T> {
  const before = await sql<{ synchronous: number }>`pragma synchronous`.execute(conn);
  const level = Number(before.rows[0]?.synchronous ?? 2);
  await sql`pragma synchronous = NORMAL`.execute(conn);
  try {
    return await step();
  } finally {
    await sql.raw(`pragma synchronous = ${level}`).execute(conn);
  }
}
