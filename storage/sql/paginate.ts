import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { executeRead } from './raw-sqlite.js';

export interface PageQuery {
  limit: number;
  /** Item id: the page after it (older items). */
  after?: string;
  /** Item id: the page before it (newer items). */
  before?: string;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
}

/**
 * Newest first over time-ordered ids (UUIDv7), with id cursors. Fetches one row more than asked
 * to learn `has_more` without a count.
 */
export async function paginate<DB, TB extends keyof DB, O>(
  db: Kysely<any>,
  query: SelectQueryBuilder<DB, TB, O>,
  idColumn: string,
  page: PageQuery,
): Promise<Page<O>> {
  const id = sql.ref(idColumn);
  let q = query;
  // CAST: see sqlite-compiler.ts (a bare parameter here re-prepares the statement on every run).
  if (page.after !== undefined) q = q.where(sql<boolean>`${id} < cast(${page.after} as text)`);
  if (page.before !== undefined) q = q.where(sql<boolean>`${id} > cast(${page.before} as text)`);
  const ascending = page.before !== undefined && page.after === undefined;
  const rows = await executeRead(db, q
    .orderBy(sql`${id}`, ascending ? 'asc' : 'desc')
    .limit(page.limit + 1));
  const has_more = rows.length > page.limit;
  const data = rows.slice(0, page.limit);
  if (ascending) data.reverse();
  return { data, has_more };
}

/** LIKE pattern for "contains text", with % and _ taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
