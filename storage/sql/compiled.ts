import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import { rawRunnerOf } from './raw-sqlite.js';

/**
 * Statements of a fixed shape compiled once and run many times. Building and compiling a Kysely
 * query costs more than SQLite takes to run a small one (an insert measured 50-70 µs a row built,
 * 11-18 µs compiled), and the hot statements of sending and logging always have the same shape.
 * Compiled through Kysely, so the SQL is the dialect's own. The query is built with a marker for
 * every value; its parameters must be exactly those markers (a literal would be refused at once),
 * and each run binds its values to them by name. Markers are strings, so SQLite's compiler casts
 * every compared marker as text (sqlite-compiler.ts): compare only text columns in these.
 */
export type Marker = (name: string) => string;
export type ShapedStatement = (conn: Kysely<any>, values: Readonly<Record<string, unknown>>) => Promise<QueryResult<unknown>>;

const prefix = '\u0000svc-param:';

export function compileShape(build: (marker: Marker) => Compilable<unknown>): ShapedStatement {
  const compiled = build((name) => `${prefix}${name}`).compile();
  const order = compiled.parameters.map((p) => {
    if (typeof p !== 'string' || !p.startsWith(prefix)) throw new Error(`compileShape: a parameter is not a marker (${compiled.sql})`);
    return p.slice(prefix.length);
  });
  return async (conn, values) => {
    const parameters = order.map((name) => {
      if (!(name in values)) throw new Error(`compileShape: no value for ${name} (${compiled.sql})`);
      return values[name] ?? null;
    });
    const raw = rawRunnerOf(conn);
    return raw ? raw(compiled.sql, parameters) : conn.executeQuery(CompiledQuery.raw(compiled.sql, parameters));
  };
}

const shapes = new WeakMap<object, Map<string, ShapedStatement>>();

/**
 * compileShape on first use of `key` with this database's dialect (the adapter is shared by a
 * database and its transactions). `key` must name everything that changes the SQL: which columns
 * are set, how many values a list holds.
 */
export function shapedStatement(db: Kysely<any>, key: string, build: (marker: Marker) => Compilable<unknown>): ShapedStatement {
  const adapter = db.getExecutor().adapter;
  let byKey = shapes.get(adapter);
  if (!byKey) {
    byKey = new Map();
    shapes.set(adapter, byKey);
  }
  let statement = byKey.get(key);
  if (!statement) {
    statement = compileShape(build);
    byKey.set(key, statement);
  }
  return statement;
}

/** The rows of the statement `key` names (compiled on first use), run with these values. */
export async function shapedRows<Row>(
  db: Kysely<any>, key: string, build: (marker: Marker) => Compilable<unknown>, values: Readonly<Record<string, unknown>>,
): Promise<Row[]> {
  return (await shapedStatement(db, key, build)(db, values)).rows as Row[];
}

/** An insert of one row of these columns, compiled once; for batches and hot paths. */
export function compiledInsert<Row extends object>(db: Kysely<any>, table: string, columns: readonly (keyof Row & string)[]): (conn: Kysely<any>, row: Row) => Promise<void> {
  const statement = compileShape((m) => db.insertInto(table).values(Object.fromEntries(columns.map((c) => [c, m(c)]))));
  return async (conn, row) => {
    await statement(conn, row as Record<string, unknown>);
  };
}
