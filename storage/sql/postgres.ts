import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { ConfigError } from '../../config/load.js';
import type { DatabaseSchema } from './tables.js';

// PostgreSQL in place of the SQLite file (config key database_url), for installs whose roles run
// on several machines. Commits are durable by PostgreSQL's own rules (synchronous_commit); there is
// no WAL file of ours to fsync and no checkpoint thread.

/** Where the database lives, from database_url: empty is the SQLite file in data_dir. */
export type DatabaseTarget = { kind: 'sqlite' } | { kind: 'postgres'; url: string };

export function databaseTarget(url: string): DatabaseTarget {
  if (url === '') return { kind: 'sqlite' };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') return { kind: 'postgres', url };
  // The URL may carry a password: only its scheme is named.
  throw new ConfigError('database_url', `must be empty (SQLite in data_dir) or a postgres:// or postgresql:// URL; got scheme "${scheme ?? 'none'}"`);
}

const INT8 = 20;
const NUMERIC = 1700;

/**
 * pg hands 64-bit integers (count(*), sum() of integers, bigint columns) and numerics back as
 * strings, since they may not fit a JavaScript number. Ours are counts, sizes and outbox positions,
 * far below 2^53: they come back as numbers, as SQLite gives them.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export interface PostgresOptions {
  url: string;
  /** Connections per process; every role opens its own pool. */
  maxConnections?: number;
}

export function postgresKysely(options: PostgresOptions): Kysely<DatabaseSchema> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    types: types as pg.CustomTypesConfig,
    // Timestamps are ISO text columns, never timestamptz: no time zone is involved either way.
    application_name: 'svc',
  });
  // An idle connection the server dropped (a restart) errors here; the pool replaces it.
  pool.on('error', () => undefined);
  return new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
}

/** Answers once the server runs a statement; for readiness. */
export async function pingPostgres(db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db);
}
