import { copyFile, mkdir, open, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createPrivateFile, makeFilePrivate, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files.js';

// The online backup of the SQLite file (SQLite's backup API through better-sqlite3: a consistent
// snapshot while svc keeps writing) and of the spool files that snapshot refers to.

export interface DatabaseCopy {
  bytes: number;
  pages: number;
  /** How often SQLite started over because another process wrote meanwhile. */
  restarts: number;
}

// Pages per step: small enough that one step does not hold the event loop long (4 KiB pages:
// 4 MiB), large enough that a database of a few GiB takes few steps.
const PAGES_PER_STEP = 1000;
// Another process (another role) writing between steps makes SQLite start over. After this many
// restarts the rest is copied in one step, inside one read transaction, which WAL lets writers
// run beside: a busy server cannot starve the backup.
const MAX_RESTARTS = 3;

/** Copies the open database to `file` (which must not exist), fsyncs it, and checks the copy. */
export async function backupDatabase(sqlite: BetterSqlite3.Database, file: string): Promise<DatabaseCopy> {
  let restarts = 0;
  let lowest = Number.POSITIVE_INFINITY;
  createPrivateFile(file); // SQLite would make the copy 0644 less the umask
  const result = await sqlite.backup(file, {
    progress: ({ remainingPages }) => {
      if (remainingPages > lowest) restarts++;
      lowest = Math.min(lowest, remainingPages);
      return restarts >= MAX_RESTARTS ? remainingPages + 1_000_000 : PAGES_PER_STEP;
    },
  });
  await fsyncFile(file);
  await fsyncFile(dirname(file));
  const check = quickCheck(file);
  if (check !== 'ok') throw new Error(`backup: the copy fails its check: ${check}`);
  return { bytes: (await stat(file)).size, pages: result.totalPages, restarts };
}

/** `pragma quick_check` of a database file, read-only: `ok`, or SQLite's first complaint. */
export function quickCheck(file: string): string {
  const copy = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return String(copy.pragma('quick_check', { simple: true }));
  } finally {
    copy.close();
  }
}

/** The spool names a database file refers to (the kept raw sources of received mail). */
export function spoolKeysOf(file: string): string[] {
  const copy = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const rows = copy.prepare('select raw_key from received_emails where raw_key is not null').all() as { raw_key: string }[];
    return rows.map((r) => r.raw_key);
  } finally {
    copy.close();
  }
}

/**
 * Copies spool files by name into `toDir`. A name already gone (its mail was deleted after the
 * snapshot) is counted, not an error.
 */
export async function copySpoolFiles(fromDir: string, keys: readonly string[], toDir: string): Promise<{ copied: number; missing: number; bytes: number }> {
  let copied = 0;
  let missing = 0;
  let bytes = 0;
  const folders = new Set<string>();
  for (const key of keys) {
    if (key.includes('..') || key.startsWith('/')) throw new Error(`backup: bad spool key ${key}`);
    const target = join(toDir, key);
    if (!folders.has(dirname(target))) {
      await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
      folders.add(dirname(target));
    }
    try {
      await copyFile(join(fromDir, key), target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') { missing++; continue; }
      throw err;
    }
    await makeFilePrivate(target);
    await fsyncFile(target);
    bytes += (await stat(target)).size;
    copied++;
  }
  for (const folder of folders) await fsyncFile(folder);
  return { copied, missing, bytes };
}

/** Writes a small file durably (temp name, fsync, rename, fsync of the folder). */
export async function writeFileDurably(file: string, text: string): Promise<void> {
  const temp = `${file}.partial`;
  const handle = await open(temp, 'wx', PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  await fsyncFile(dirname(file));
}

async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
