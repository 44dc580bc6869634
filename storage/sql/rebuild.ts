import { chmodSync, chownSync, closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { registerSqliteFunctions, SQLITE_PAGE_BYTES } from './db.js';

// `svc db rebuild`: a database file made by an older svc keeps the page size it was made with
// (SQLite fixes it at the first page), so it misses what svc's larger pages buy. The file is
// rewritten whole into a copy with the new page size (VACUUM INTO), the copy checked against the
// original, and renamed over it: until that rename the original is untouched and complete, after
// it the copy is. The caller makes sure no svc process runs on the folder (its locks); SQLite
// itself refuses the first step while any other connection has the file open.

export interface RebuildReport {
  path: string;
  /** The page size before; equal to `pageBytes` when nothing had to be done. */
  fromPageBytes: number;
  pageBytes: number;
  bytesBefore: number;
  bytesAfter: number;
  tables: number;
  rows: number;
  ms: number;
}

/** Why the file was left as it was: open elsewhere, not enough room, a copy that did not check out. */
export class RebuildRefusedError extends Error {}

/**
 * Rewrites the SQLite file at `path` with svc's page size; a file that has it already is left
 * alone. `onRewrite` is told before the copy starts (a large file takes minutes).
 */
export function rebuildSqliteFile(path: string, onRewrite: (fromPageBytes: number) => void = () => {}): RebuildReport {
  const started = performance.now();
  const copyPath = `${path}.rebuild`;
  const source = openAlone(path);
  try {
    const fromPageBytes = pageSizeOf(source);
    const bytesBefore = statSync(path).size;
    const unchanged = { path, fromPageBytes, pageBytes: fromPageBytes, bytesBefore, bytesAfter: bytesBefore, tables: 0, rows: 0 };
    if (fromPageBytes === SQLITE_PAGE_BYTES) return { ...unchanged, ms: performance.now() - started };
    checkRoom(path, bytesBefore);
    rmSync(copyPath, { force: true });
    onRewrite(fromPageBytes);
    source.pragma(`page_size = ${SQLITE_PAGE_BYTES}`);
    source.prepare('vacuum into ?').run(copyPath);
    const counts = checkCopy(source, copyPath);
    keepOwnerAndMode(path, copyPath);
    fsyncFile(copyPath);
    source.close();
    renameSync(copyPath, path);
    fsyncFile(dirname(path));
    const ms = performance.now() - started;
    return { ...unchanged, pageBytes: SQLITE_PAGE_BYTES, bytesAfter: statSync(path).size, ...counts, ms };
  } catch (err) {
    rmSync(copyPath, { force: true });
    throw err;
  } finally {
    if (source.open) source.close();
  }
}

/**
 * The file with no other connection: leaving WAL mode needs every other connection gone, so
 * SQLite answers busy while any process has it open (and folds the WAL into the file meanwhile).
 * svc puts WAL mode back at its next start; the copy is made in WAL mode already.
 */
function openAlone(path: string): BetterSqlite3.Database {
  if (!existsSync(path)) throw new RebuildRefusedError(`${path} does not exist: svc has not run on this data folder`);
  const db = new BetterSqlite3(path, { fileMustExist: true, timeout: 0 });
  try {
    registerSqliteFunctions(db);
    db.pragma('journal_mode = DELETE');
    if (String(db.pragma('journal_mode', { simple: true })) !== 'delete') throw new RebuildRefusedError(`${path} is open in another process`);
    return db;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw new RebuildRefusedError(`${path} is open in another process; stop it first`);
    throw err;
  }
}

/** The copy needs about the file's size again, and some room left for svc after. */
function checkRoom(path: string, bytes: number): void {
  const fs = statfsSync(dirname(path));
  const free = fs.bavail * fs.bsize;
  const needed = bytes + Math.max(64 * 1024 * 1024, bytes / 10);
  if (free < needed) {
    throw new RebuildRefusedError(`the copy needs about ${mib(needed)} MiB free beside ${path}; ${mib(free)} MiB are: free some space first`);
  }
}

/** The copy has the new page size, passes quick_check and holds every table's rows; it is left in WAL mode. */
function checkCopy(source: BetterSqlite3.Database, copyPath: string): { tables: number; rows: number } {
  const copy = new BetterSqlite3(copyPath, { fileMustExist: true });
  try {
    registerSqliteFunctions(copy);
    if (pageSizeOf(copy) !== SQLITE_PAGE_BYTES) throw new RebuildRefusedError(`the copy has ${pageSizeOf(copy)}-byte pages, not ${SQLITE_PAGE_BYTES}`);
    copy.pragma('journal_mode = WAL');
    const verdict = String(copy.pragma('quick_check', { simple: true }));
    if (verdict !== 'ok') throw new RebuildRefusedError(`the copy failed its check (${verdict}); the database is unchanged`);
    const tables = tableNames(source);
    let rows = 0;
    for (const table of tables) {
      const before = rowCount(source, table);
      const after = rowCount(copy, table);
      if (before !== after) throw new RebuildRefusedError(`the copy of ${table} has ${after} rows, not ${before}; the database is unchanged`);
      rows += after;
    }
    return { tables: tables.length, rows };
  } finally {
    copy.close();
  }
}

/** svc runs as its own user while an operator may run this as root: the new file must stay svc's. */
function keepOwnerAndMode(path: string, copyPath: string): void {
  const { uid, gid, mode } = statSync(path);
  chmodSync(copyPath, mode & 0o777);
  const mine = statSync(copyPath);
  if (mine.uid !== uid || mine.gid !== gid) chownSync(copyPath, uid, gid);
}

function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const pageSizeOf = (db: BetterSqlite3.Database) => Number(db.pragma('page_size', { simple: true }));
const tableNames = (db: BetterSqlite3.Database) => (db.prepare("select name from sqlite_schema where type = 'table' and name not like 'sqlite_%' order by name")
  .pluck().all() as string[]);
const rowCount = (db: BetterSqlite3.Database, table: string) => Number(db.prepare(`select count(*) from "${table.replaceAll('"', '""')}"`).pluck().get());
const mib = (bytes: number) => Math.ceil(bytes / (1024 * 1024));
