import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import type { Db } from './db.js';
import { registerRawSqlite } from './raw-sqlite.js';

/**
 * The statements a write transaction runs around its work (write-transaction.ts), on the connection it
 * holds. On SQLite they are prepared once on the raw handle — the very connection Kysely holds, as
 * its SQLite driver has only one — because each of them through the query builder cost about as
 * much as SQLite's work in a small transaction, and a transaction runs six of them. Elsewhere they
 * go through the query builder on the held connection.
 */
export interface TxStatements {
  setBusyTimeout(ms: number): Promise<void>;
  run(statement: 'begin immediate' | 'commit' | 'rollback'): Promise<void>;
  synchronous(): Promise<number>;
  setSynchronous(level: number): Promise<void>;
}

const rawStatements = new WeakMap<Db, TxStatements>();

/** For a database opened on better-sqlite3 (db.ts). */
export function registerRawTxStatements(db: Db, sqlite: BetterSqlite3.Database): void {
  const raw = registerRawSqlite(db, sqlite);
  const run = (text: string) => { raw(text, []); };
  const readSynchronous = sqlite.prepare('pragma synchronous').pluck();
  rawStatements.set(db, {
    setBusyTimeout: async (ms) => run(`pragma busy_timeout = ${Math.trunc(ms)}`),
    run: async (text) => run(text),
    synchronous: async () => Number(readSynchronous.get()),
    setSynchronous: async (level) => run(`pragma synchronous = ${Math.trunc(level)}`),
  });
}

/** The statements for `conn`, a connection held from `db`. */
export function txStatements(db: Db, conn: Db): TxStatements {
  return rawStatements.get(db) ?? {
    setBusyTimeout: async (ms) => { await sql.raw(`pragma busy_timeout = ${Math.trunc(ms)}`).execute(conn); },
    run: async (text) => { await sql.raw(text).execute(conn); },
    synchronous: async () => Number((await sql<{ synchronous: number }>`pragma synchronous`.execute(conn)).rows[0]?.synchronous ?? 2),
    setSynchronous: async (level) => { await sql.raw(`pragma synchronous = ${Math.trunc(level)}`).execute(conn); },
  };
}
