import BetterSqlite3 from 'better-sqlite3';
import { createPrivateFile } from './private-files.js';

/**
 * Runs `fn` holding an exclusive lock on the file at `path` (created owner-only and empty when
 * missing), waiting up to `waitMs` for another holder. The lock is SQLite's: fcntl(2) underneath,
 * which the kernel drops when its process dies, so it never goes stale; within one process a
 * second connection is refused as another process is. Node has no flock, and better-sqlite3 is
 * already the engine here. The file must stay: deleting it would let waiters lock different files.
 */
export function withExclusiveFileLock<T>(path: string, waitMs: number, fn: () => T): T {
  createPrivateFile(path);
  const guard = new BetterSqlite3(path, { timeout: waitMs });
  try {
    guard.exec('BEGIN EXCLUSIVE');
    try {
      return fn();
    } finally {
      guard.exec('ROLLBACK');
    }
  } finally {
    guard.close();
  }
}
