import { PostgresAdapter, type Kysely } from 'kysely';

// The few places where SQLite and PostgreSQL need different SQL ask this. A database and its
// transactions share one adapter, so a transaction handle answers like its database.

/** True when `db` (or a transaction of it) talks to PostgreSQL. */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** A 64-bit integer column: SQLite's INTEGER is already 64-bit; PostgreSQL's is not. */
export const int64Type = (db: Kysely<any>) => (isPostgres(db) ? 'bigint' : 'integer');

/**
 * The operator of a case-insensitive "contains" match. SQLite's LIKE ignores ASCII case already;
 * PostgreSQL's LIKE does not, its ILIKE does.
 */
export const likeOperator = (db: Kysely<any>) => (isPostgres(db) ? 'ilike' : 'like');
