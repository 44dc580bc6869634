import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { Migrator, type MigrationResultSet } from 'kysely/migration';
import type { DatabaseSchema } from './tables.js';
import { migrations } from './migrations/index.js';
import { SvcSqliteDialect } from './sqlite-compiler.js';
import { WalSync } from './wal-sync.js';
import { startCheckpointer } from './checkpointer.js';
import { registerRawTxStatements } from './tx-statements.js';
import { databaseTarget, pingPostgres, postgresKysely } from './postgres.js';
import { createPrivateFile, makePrivateDir, tightenToOwner } from '../files/private-files.js';

export type Db = Kysely<DatabaseSchema>;

const walSyncs = new WeakMap<Db, WalSync>();

/**
 * The WAL fsync of a database opened with synchronous=FULL, for write paths that commit with
 * NORMAL and then wait for this fsync off the event loop (write-transaction.ts). Undefined for a
 * transaction handle or a database opened with NORMAL: such callers keep SQLite's own commit.
 */
export function walSyncOf(db: Db): WalSync | undefined {
  return walSyncs.get(db);
}

/** How long a statement waits for another process's write lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

export interface OpenDatabaseOptions {
  /** database_url: empty opens the SQLite file at `path`; postgres://… that PostgreSQL database. */
  url?: string;
  /** The SQLite file. */
  path: string;
  /** SQLite's synchronous: FULL fsyncs every commit, what the durability promises rest on. */
  synchronous: 'FULL' | 'NORMAL';
}

export interface Database {
  kind: 'sqlite' | 'postgres';
  db: Db;
  /**
   * The raw SQLite handle, for pragmas, backups and tests only; queries go through `db`. Only
   * when `kind` is 'sqlite': reading it on PostgreSQL throws.
   */
  readonly sqlite: BetterSqlite3.Database;
  /** One round trip to the database; for readiness. */
  ping(): Promise<void>;
  /** Bytes of the SQLite file and of its WAL now (the operator's /metrics); null on PostgreSQL. */
  fileSizes(): { database: number; wal: number } | null;
  close(): Promise<void>;
}

/**
 * Opens the database database_url names (the SQLite file when empty) and applies every pending
 * migration. A URL of another scheme is a ConfigError naming the key.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const target = databaseTarget(options.url ?? '');
  if (target.kind === 'postgres') return openPostgres(target.url);
  return openSqlite(options);
}

async function openPostgres(url: string): Promise<Database> {
  const db = postgresKysely({ url });
  try {
    await migrateToLatest(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return {
    kind: 'postgres', db,
    get sqlite(): BetterSqlite3.Database {
      throw new Error('storage: the database is PostgreSQL (database_url); there is no SQLite handle');
    },
    ping: () => pingPostgres(db),
    fileSizes: () => null,
    close: () => db.destroy(),
  };
}

/** Opens the SQLite file in WAL mode and applies every pending migration. */
async function openSqlite(options: OpenDatabaseOptions): Promise<Database> {
  makePrivateDir(dirname(options.path));
  // SQLite makes the file 0644 less the umask, and its -wal and -shm take the file's mode: made
  // owner-only before the open, all three are. The tightening fixes files an older svc made.
  createPrivateFile(options.path);
  const sqlite = openChecked(options.path);
  for (const suffix of ['', '-wal', '-shm']) tightenToOwner(`${options.path}${suffix}`);
  sqlite.pragma(`synchronous = ${options.synchronous}`);
  sqlite.pragma('foreign_keys = ON');
  // Several roles may share the file; wait for a writer instead of failing at once.
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // Checkpoints are the checkpoint thread's job (checkpointer.ts) at 4 MiB of WAL; this connection
  // checkpoints inside a commit only if the WAL reaches 40 MiB, should that thread be gone.
  sqlite.pragma(`wal_autocheckpoint = ${autocheckpointPages(sqlite)}`);
  registerSqliteFunctions(sqlite);
  const db = new Kysely<DatabaseSchema>({
    dialect: new SvcSqliteDialect({ database: withStatementCache(sqlite, 1000) }),
  });
  await migrateToLatest(db);
  const walSync = options.synchronous === 'FULL' ? new WalSync(`${options.path}-wal`) : undefined;
  if (walSync) walSyncs.set(db, walSync);
  registerRawTxStatements(db, sqlite);
  const checkpointer = startCheckpointer(options.path);
  const ping = sqlite.prepare('select 1');
  return {
    kind: 'sqlite', db, sqlite,
    ping: async () => { ping.get(); },
    fileSizes: () => ({ database: sizeOf(options.path), wal: sizeOf(`${options.path}-wal`) }),
    close: async () => {
      await checkpointer.stop();
      await walSync?.close();
      await db.destroy();
    },
  };
}

/** The functions svc's SQL calls, on a connection to svc's file (every connection that runs it). */
export function registerSqliteFunctions(sqlite: BetterSqlite3.Database): void {
  // SQLite's lower() and LIKE fold ASCII only; "case-insensitive" searches fold with this instead.
  sqlite.function('svc_casefold', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v) as string);
}

/** A file's size; 0 when it is not there (no WAL between a checkpoint's truncation and the next write). */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * The page size of a database file svc creates. At SQLite's default 4 KiB a 4 KB email body does
 * not fit in its row's page and spills into an overflow page of its own, and every B-tree is a
 * level deeper. Measured on svc's schema (bench/README.md, broadcast and audience): a broadcast
 * page's inserts and commit took about a fifth less SQLite time at 16 KiB, a delivery's updates
 * the same, and segment counts over a million contacts about half. A file an older svc made is
 * given it by `svc db rebuild` (rebuild.ts).
 */
export const SQLITE_PAGE_BYTES = 16384;

const AUTOCHECKPOINT_BYTES = 40 * 1024 * 1024;

/** SQLite's own checkpoint threshold is in pages: 40 MiB whatever the file's page size. */
function autocheckpointPages(sqlite: BetterSqlite3.Database): number {
  const pageBytes = Number(sqlite.pragma('page_size', { simple: true }));
  return Math.max(1, Math.round(AUTOCHECKPOINT_BYTES / pageBytes));
}

/**
 * Opens the file in WAL mode and runs `pragma quick_check` (every page read once: 4.5 s per GiB
 * measured on a busy 2-core machine), so a damaged file stops start-up with one clear line instead of failing later, in
 * the middle of some transaction.
 */
function openChecked(path: string): BetterSqlite3.Database {
  let sqlite: BetterSqlite3.Database | undefined;
  try {
    sqlite = new BetterSqlite3(path);
    // Takes effect only in a file that has no page yet (the WAL mode below writes the first);
    // a database made by an older svc keeps its size.
    sqlite.pragma(`page_size = ${SQLITE_PAGE_BYTES}`);
    sqlite.pragma('journal_mode = WAL');
    const verdict = String(sqlite.pragma('quick_check', { simple: true }));
    if (verdict !== 'ok') throw new DamagedDatabaseError(path, verdict);
    return sqlite;
  } catch (err) {
    sqlite?.close();
    if (err instanceof DamagedDatabaseError) throw err;
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') throw new DamagedDatabaseError(path, (err as Error).message);
    throw err;
  }
}

/** The SQLite file is not a database, or fails its check: svc does not start on it. */
export class DamagedDatabaseError extends Error {
  constructor(path: string, reason: string) {
    super(`storage: ${path} is damaged (${reason.split('\n').slice(0, 2).join(' ').slice(0, 200)}); svc will not start on it. Restore the latest backup (docs/operations.md).`);
  }
}

/**
 * Kysely prepares every query anew; preparing costs more than running most of ours. Statements are
 * kept by SQL text (bounded, oldest dropped first). Safe because the SQLite driver runs each
 * statement to completion synchronously (svc never streams a query).
 */
function withStatementCache(sqlite: BetterSqlite3.Database, max: number) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`storage: migration ${failed} failed: ${String(result.error)}`);
  }
  return result;
}
