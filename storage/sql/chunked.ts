import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Marker } from './compiled.js';
import { rawRunnerOf } from './raw-sqlite.js';

// Statements over many rows at once (contact imports, a campaign page's emails): every statement
// covers a chunk of rows and is compiled once per chunk size, so a batch of a thousand rows is a
// dozen prepared statements rather than thousands of built ones. Chunk sizes are fixed per
// statement so the number of distinct statements stays small whatever the batch sizes are; on
// SQLite they run on the raw path of the write transaction (compiled.ts), elsewhere as compiled
// text on the connection given.

export type ChunkBuild = (m: Marker, size: number) => Compilable<unknown>;

/** The sizes contact imports use (largest first). */
export const defaultChunkSizes: readonly number[] = [256, 64, 16, 4, 1];

/** `rows` cut into chunks of the given sizes, largest first (the last size must be 1). */
export function chunksOf<T>(rows: readonly T[], sizes: readonly number[] = defaultChunkSizes): T[][] {
  const chunks: T[][] = [];
  let at = 0;
  for (const size of sizes) {
    while (rows.length - at >= size) {
      chunks.push(rows.slice(at, at + size));
      at += size;
    }
  }
  return chunks;
}

/** A chunk statement compiled once: for each parameter, the row it comes from (-1: shared) and the field. */
interface ChunkShape {
  sql: string;
  rowOf: number[];
  fieldOf: string[];
}

const chunkShapes = new WeakMap<object, Map<string, ChunkShape>>();
const markerPrefix = '\u0000svc-chunk:';

/**
 * The statement for `size` rows of `key`, compiled with this database's dialect. Markers name a
 * row and a field (`3:email`, `-1:team_id` for a value shared by every row), so each run binds a
 * flat array in the statement's own order: no marker names built per value.
 */
function chunkShape(db: Kysely<any>, key: string, size: number, build: ChunkBuild): ChunkShape {
  const adapter = db.getExecutor().adapter;
  let byKey = chunkShapes.get(adapter);
  if (!byKey) chunkShapes.set(adapter, (byKey = new Map()));
  const name = `${key}.${size}`;
  let shape = byKey.get(name);
  if (!shape) {
    const compiled = build((marker) => `${markerPrefix}${marker}`, size).compile();
    const rowOf: number[] = [];
    const fieldOf: string[] = [];
    for (const p of compiled.parameters) {
      if (typeof p !== 'string' || !p.startsWith(markerPrefix)) throw new Error(`chunked: a parameter is not a marker (${compiled.sql})`);
      const [row, field] = p.slice(markerPrefix.length).split(':') as [string, string];
      rowOf.push(Number(row));
      fieldOf.push(field);
    }
    shape = { sql: compiled.sql, rowOf, fieldOf };
    byKey.set(name, shape);
  }
  return shape;
}

/** Runs a chunked statement over `rows` (objects whose fields the markers name); answers the rows it returned. */
export async function runChunked<T extends object>(
  db: Kysely<any>, key: string, rows: readonly T[], build: ChunkBuild, shared: Record<string, unknown> = {},
  sizes: readonly number[] = defaultChunkSizes,
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (const chunk of chunksOf(rows, sizes)) {
    const shape = chunkShape(db, key, chunk.length, build);
    const parameters = new Array<unknown>(shape.rowOf.length);
    for (let p = 0; p < parameters.length; p++) {
      const row = shape.rowOf[p]!;
      const value = row < 0 ? shared[shape.fieldOf[p]!] : (chunk[row] as Record<string, unknown>)[shape.fieldOf[p]!];
      parameters[p] = value ?? null;
    }
    const raw = rawRunnerOf(db);
    const result = raw ? raw(shape.sql, parameters) : await db.executeQuery(CompiledQuery.raw(shape.sql, parameters));
    for (const row of result.rows) found.push(row as Record<string, unknown>);
  }
  return found;
}

/** Values of `columns` for `size` rows, each marker naming its row and column. */
export const valuesOf = (m: Marker, columns: readonly string[], size: number) =>
  Array.from({ length: size }, (_, i) => Object.fromEntries(columns.map((c) => [c, m(`${i}:${c}`)])));

// Bound variables per statement of `insertRows`: under SQLite's oldest default (999), so no
// chunk reaches "too many SQL variables" on any build, nor PostgreSQL's 65,535 parameters.
const variablesPerStatement = 999;

/**
 * The length a list of `n` bound values is padded to, so that statements with a list of varying
 * length come in few shapes: a power of two, or past 1,024 the next multiple of 1,024 (never much
 * above `n` bound variables; SQLite allows 32,766 in a statement).
 */
export function paddedLength(n: number): number {
  if (n === 0) return 0;
  return n <= 1024 ? 2 ** Math.ceil(Math.log2(n)) : Math.ceil(n / 1024) * 1024;
}

/** Powers of two from the largest chunk whose values fit `variablesPerStatement` (at most 256 rows) down to 1. */
export function chunkSizesFor(columns: number): number[] {
  const most = Math.min(256, Math.max(1, Math.floor(variablesPerStatement / Math.max(1, columns))));
  const sizes: number[] = [];
  for (let size = 2 ** Math.floor(Math.log2(most)); size >= 1; size /= 2) sizes.push(size);
  return sizes;
}

/**
 * Inserts rows with multi-row statements compiled once per table, set of columns and chunk size.
 * Rows are grouped by the columns they hold a value for (an undefined field is left out, so the
 * column takes its default, as the query builder would do), and each group's columns are named
 * once per statement: SQLite has no DEFAULT in VALUES for a row that lacks one.
 */
export async function insertRows<T extends object>(db: Kysely<any>, table: string, rows: readonly T[]): Promise<void> {
  const byShape = new Map<string, { columns: string[]; rows: T[] }>();
  for (const row of rows) {
    const columns = Object.keys(row).filter((c) => (row as Record<string, unknown>)[c] !== undefined);
    const shape = columns.join(',');
    const group = byShape.get(shape);
    if (group) group.rows.push(row);
    else byShape.set(shape, { columns, rows: [row] });
  }
  for (const [shape, group] of byShape) {
    await runChunked(db, `insertRows:${table}:${shape}`, group.rows,
      (m, size) => db.insertInto(table).values(valuesOf(m, group.columns, size)), {}, chunkSizesFor(group.columns.length));
  }
}
