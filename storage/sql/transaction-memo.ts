import type { Kysely } from 'kysely';
import { rawRunnerOf } from './raw-sqlite.js';

/**
 * A value read at most once per transaction, for reads that a crowd of writes sharing one
 * transaction (a group commit) would otherwise repeat. Inside a transaction the answer cannot
 * change under it on SQLite (one writer at a time); on PostgreSQL it is the answer as of its first
 * read. Keyed by the transaction's handle, which is new for every transaction (and for every retry
 * of one), so nothing outlives it. On a handle that is not a transaction it reads every time.
 */
export function transactionMemo<V>(read: (db: Kysely<any>, key: string) => Promise<V>): (db: Kysely<any>, key: string) => Promise<V> {
  const memo = new WeakMap<Kysely<any>, Map<string, Promise<V>>>();
  return (db, key) => {
    if (!isTransactionHandle(db)) return read(db, key);
    let byKey = memo.get(db);
    if (!byKey) {
      byKey = new Map();
      memo.set(db, byKey);
    }
    let value = byKey.get(key);
    if (!value) {
      value = read(db, key);
      byKey.set(key, value);
    }
    return value;
  };
}

/** A Kysely transaction, or a SQLite connection a write transaction holds (write-transaction.ts). */
const isTransactionHandle = (db: Kysely<any>) => db.isTransaction || rawRunnerOf(db) !== undefined;
