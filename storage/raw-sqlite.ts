import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, QueryResult } from 'kysely';

/**
 * Compiled statements (compiled.ts) run straight on better-sqlite3 when their connection is one a
 * write transaction holds (write-transaction.ts). Kysely's way to the same handle — its executor,
 * connection provider and driver mutex, three promise hops — cost more than SQLite's own work for
 * the small inserts of request logs and events. Only a held connection qualifies: on SQLite there
 * is one connection, and the transaction holding it is the only code that may use it meanwhile.
 * A query on the database itself must still queue behind Kysely's mutex.
 */
export type RawRunner = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown>;

const runners = new WeakMap<Kysely<any>, RawRunner>();
const held = new WeakMap<Kysely<any>, RawRunner>();

/** For a database opened on better-sqlite3 (db.ts). */
export function registerRawRunner(db: Kysely<any>, sqlite: BetterSqlite3.Database): void {
  const prepared = new Map<string, BetterSqlite3.Statement>();
  runners.set(db, (text, parameters) => {
    let statement = prepared.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      prepared.set(text, statement);
    }
    if (statement.reader) return { rows: statement.all(parameters) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
  });
}

/** Marks `conn`, a connection a write transaction holds from `db`, for the raw path. */
export function holdRaw(db: Kysely<any>, conn: Kysely<any>): void {
  const runner = runners.get(db);
  if (runner) held.set(conn, runner);
}

/** The raw runner for `conn` when it is a held connection of a SQLite database. */
export function rawRunnerOf(conn: Kysely<any>): RawRunner | undefined {
  return held.get(conn);
}
