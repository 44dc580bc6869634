import { readdir, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

// Walking the received/ area of the spool for the orphan sweep. Folder names are the first 8 hex
// digits of the records' UUIDv7 ids: the top 32 bits of a millisecond timestamp, so each folder
// covers 2^16 ms (about one minute) starting at that number times 65,536.

const FOLDER = /^[0-9a-f]{8}$/;
const NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.eml$/;
export const FOLDER_SPAN_MS = 65_536;

/** When a received/ folder's minute starts (ms since the epoch). */
export const folderStartMs = (folder: string): number => parseInt(folder, 16) * FOLDER_SPAN_MS;

/** received/ folders, oldest first; with `sinceMs`, only those whose minute ends after it. */
export async function receivedFolders(spoolDir: string, sinceMs?: number): Promise<string[]> {
  const names = await readdir(join(spoolDir, 'received')).catch(() => [] as string[]);
  return names.filter((n) => FOLDER.test(n) && (sinceMs === undefined || folderStartMs(n) + FOLDER_SPAN_MS > sinceMs)).sort();
}

/** The raw files of one folder as spool keys with the record id each names. */
export async function receivedNames(spoolDir: string, folder: string): Promise<{ key: string; id: string }[]> {
  const names = await readdir(join(spoolDir, 'received', folder)).catch(() => [] as string[]);
  return names.flatMap((n) => {
    const id = NAME.exec(n)?.[1];
    return id ? [{ key: `received/${folder}/${n}`, id }] : [];
  });
}

/** The file's last write (ms), or undefined when it is gone. */
export async function modifiedAtMs(spoolDir: string, key: string): Promise<number | undefined> {
  const info = await stat(join(spoolDir, key)).catch(() => undefined);
  return info?.mtimeMs;
}

/** Removes the folder if it is empty; a folder that is not (or is gone) is left as it is. */
export async function removeIfEmpty(spoolDir: string, folder: string): Promise<boolean> {
  try {
    await rmdir(join(spoolDir, 'received', folder));
    return true;
  } catch {
    return false;
  }
}
