import { statfs } from 'node:fs/promises';

// What a full or failing disk looks like from inside svc: SQLite says SQLITE_FULL (or an I/O error
// when a write or fsync fails), the file system says ENOSPC / EDQUOT / EFBIG. Each edge answers it
// as a temporary failure (API 503, SMTP 452/451): the request was not stored, and will be once
// space returns.

export type StorageFailure = 'full' | 'io';

/** 'full' for no space (or quota, or file-size limit), 'io' for a failed write or fsync; else undefined. */
export function storageFailure(err: unknown): StorageFailure | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = String((e as { code?: unknown }).code ?? '');
    if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG') return 'full';
    if (code.startsWith('SQLITE_IOERR') || code === 'EIO') return 'io';
  }
  return undefined;
}

/** Bytes an unprivileged writer can still use in the file system holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}
