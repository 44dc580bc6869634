import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { backupDatabase, copySpoolFiles, spoolKeysOf, writeFileDurably } from '../storage/files/index.js';
import type { Database } from '../storage/sql/index.js';
import { PRIVATE_DIR_MODE } from '../storage/files/index.js';
import type { Clock } from './clock.js';
import { ServiceError, validationError } from './errors.js';
import type { Logger } from './logger.js';

// `svc admin backup [PATH]`: a folder holding a consistent copy of the database (SQLite's online
// backup, taken while svc keeps working) and the raw sources of received mail it refers to, plus
// a manifest. Restoring is putting both back into a stopped svc's data folder (docs/operations.md).
// The secret key (`secret.key`) is not copied: sealed secrets in the copy open only with it, so
// the operator keeps it apart from the backups. A PostgreSQL database (database_url) is backed up
// with PostgreSQL's own tools (pg_dump): svc refuses rather than copy only the spool.

export interface BackupSummary {
  object: 'backup';
  path: string;
  created_at: string;
  database_bytes: number;
  database_pages: number;
  restarts: number;
  spool_files: number;
  spool_missing: number;
  spool_bytes: number;
  duration_ms: number;
}

export interface BackupDeps {
  database: Pick<Database, 'kind' | 'sqlite'>;
  spoolDir: string;
  dataDir: string;
  clock: Clock;
  logger: Logger;
}

export interface BackupService {
  run(destination?: string): Promise<BackupSummary>;
}

export function backupService(deps: BackupDeps): BackupService {
  return {
    async run(destination) {
      if (deps.database.kind !== 'sqlite') {
        throw new ServiceError(501, 'not_implemented', 'svc admin backup copies the SQLite file, and this svc uses PostgreSQL (database_url): back the database up with pg_dump (docs/operations.md).');
      }
      const started = performance.now();
      const createdAt = deps.clock.now().toISOString();
      const path = destination ?? join(deps.dataDir, 'backups', `backup-${createdAt.replace(/[:.]/g, '-')}`);
      await prepareFolder(path);
      // Everything is written under a temporary name first: a folder named `path` is a whole backup.
      const work = `${path}.partial`;
      await rm(work, { recursive: true, force: true }); // left by a backup that died half-way
      await mkdir(work, { mode: PRIVATE_DIR_MODE });
      const database = await backupDatabase(deps.database.sqlite, join(work, 'svc.sqlite'));
      const spool = await copySpoolFiles(deps.spoolDir, spoolKeysOf(join(work, 'svc.sqlite')), join(work, 'spool'));
      const summary: BackupSummary = {
        object: 'backup', path, created_at: createdAt, database_bytes: database.bytes, database_pages: database.pages,
        restarts: database.restarts, spool_files: spool.copied, spool_missing: spool.missing, spool_bytes: spool.bytes,
        duration_ms: Math.round(performance.now() - started),
      };
      await writeFileDurably(join(work, 'backup.json'), `${JSON.stringify(summary, null, 2)}\n`);
      await rename(work, path);
      deps.logger.info({ path, databaseBytes: database.bytes, spoolFiles: spool.copied, spoolMissing: spool.missing, restarts: database.restarts, ms: summary.duration_ms }, 'backup written');
      return summary;
    },
  };
}

/** The destination must be absolute and new (or an empty folder, which is replaced). */
async function prepareFolder(path: string): Promise<void> {
  if (!isAbsolute(path)) throw validationError(422, 'path', 'The backup path must be absolute.');
  const existing = await readdir(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    if (err.code === 'ENOTDIR') throw validationError(422, 'path', `${path} exists and is not a folder.`);
    throw err;
  });
  if (existing && existing.length > 0) throw validationError(422, 'path', `${path} exists and is not empty; give a new folder.`);
  if (existing) await rmdir(path);
  await mkdir(join(path, '..'), { recursive: true, mode: PRIVATE_DIR_MODE });
}
