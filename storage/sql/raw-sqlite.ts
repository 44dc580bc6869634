import type BetterSqlite3 from 'better-sqlite3';
import type { Compilable, Kysely, QueryResult } from 'kysely';

/**
 * Compiled statements (compiled.ts) run straight on better-sqlite3 when their connection is one a
 * write transaction holds (write-transaction.ts). Kysely's way to the same handle — its executor,
 * connection provider and driver mutex, three promise hops — cost more than SQLite's own work for
 * the small inserts of request logs and events. Only a held connection qualifies: on SQLite there
 * is one connection, and the transaction holding it is the only code that may use it meanwhile.
 * A query on the database itself must still queue behind Kysely's mutex.
 */
export type RawRunner = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown>;

interface RawHandle {
  sqlite: BetterSqlite3.Database;
  run: RawRunner;
  /** Write transactions holding the connection now (from acquire to release). */
  holders: number;
}

const handles = new WeakMap<Kysely<any>, RawHandle>();
const held = new WeakMap<Kysely<any>, RawRunner>();

/**
 * For a database opened on better-sqlite3 (db.ts). Its statements are prepared once by text; the
 * cache is bounded like db.ts's (lists with many filter combinations make many texts).
 */
export function registerRawSqlite(db: Kysely<any>, sqlite: BetterSqlite3.Database): RawRunner {
  const prepared = new Map<string, BetterSqlite3.Statement>();
  const run: RawRunner = (text, parameters) => {
    let statement = prepared.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      if (prepared.size >= 500) prepared.delete(prepared.keys().next().value!);
      prepared.set(text, statement);
    }
    if (statement.reader) return { rows: statement.all(parameters) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
  };
  handles.set(db, { sqlite, run, holders: 0 });
  return run;
}

/**
 * Marks `conn`, a connection a write transaction holds from `db`, for the raw path, until the
 * returned release is called (when the transaction gives the connection back).
 */
export function holdRaw(db: Kysely<any>, conn: Kysely<any>): () => void {
  const handle = handles.get(db);
  if (!handle) return () => undefined;
  held.set(conn, handle.run);
  handle.holders++;
  return () => {
    held.delete(conn);
    handle.holders--;
  };
}

/** The raw runner for `conn` when it is a held connection of a SQLite database. */
export function rawRunnerOf(conn: Kysely<any>): RawRunner | undefined {
  return held.get(conn);
}

/**
 * Runs a read on `db` straight on better-sqlite3 when no write transaction holds its connection:
 * then an autocommit read sees exactly what Kysely's way would, without its executor, connection
 * provider and mutex (as much as SQLite's own work for a page of a list). While one holds it
 * (even between its pragmas and BEGIN) the read queues behind it through Kysely, as before.
 */
export async function executeRead<O>(db: Kysely<any>, query: Compilable<O>): Promise<O[]> {
  const handle = handles.get(db);
  if (!handle || handle.holders > 0 || handle.sqlite.inTransaction) return (await db.executeQuery(query.compile())).rows as O[];
  const compiled = query.compile();
  return handle.run(compiled.sql, compiled.parameters).rows as O[];
}
