import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { chmod } from 'node:fs/promises';

// Modes of what svc creates under its data folder, whatever the umask it was started with. The
// folder holds every message, the database (tokens' hashes, sealed secrets) and the key that opens
// those secrets, and every svc process runs as one user: owner only. Group read would serve
// nobody (the admin socket already asks for the owner, and a live SQLite file cannot be read
// without writing its -shm), so no file is 0640. Modes are given at creation, never by changing
// the process umask around it, which would race with every other file the process opens.

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Makes a folder (and missing parents) owner-only; an existing folder keeps the mode it has. */
export function makePrivateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates an empty owner-only file unless one exists (SQLite opens an empty file as a new database). */
export function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, 'wx', PRIVATE_FILE_MODE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** Takes group and other bits off a file svc made before it set modes itself; a missing file is fine. */
export function tightenToOwner(path: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if ((mode & 0o077) !== 0) chmodSync(path, mode & 0o700);
}

/** Sets a copied file owner-only: a copy takes its source's mode, which may be older and looser. */
export async function makeFilePrivate(path: string): Promise<void> {
  await chmod(path, PRIVATE_FILE_MODE);
}
