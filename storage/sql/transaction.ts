import type { Db } from './db.js';

/**
 * Runs `fn` in one SQLite transaction: the repos it builds from `trx` commit or roll back together.
 * With synchronous=FULL the commit is fsynced before this resolves.
 */
export function inTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute((trx) => fn(trx));
}
