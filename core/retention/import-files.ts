import type { ImportFiles } from '../../storage/files/index.js';
import { contactImportsRepo } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';

// Contact import files are deleted seven days after their import finished (spec, Contact import
// and Limits); the import and its counts stay, marked with file_deleted_at. Files no import owns
// (an upload refused or cut short by a crash before its row committed) go after a day.

export const IMPORT_FILE_RETENTION_DAYS = 7;
const DAY_MS = 86_400_000;
/** An upload in flight has no row yet: a file younger than this is never taken for an orphan. */
const ORPHAN_AGE_MS = DAY_MS;
const BATCH = 500;

export interface ImportFileRetentionDeps {
  db: Db;
  files: ImportFiles;
  clock: Clock;
}

export async function pruneImportFiles(deps: ImportFileRetentionDeps): Promise<{ deleted: number; orphans: number }> {
  const now = deps.clock.now();
  const repo = contactImportsRepo(deps.db);
  const before = new Date(now.getTime() - IMPORT_FILE_RETENTION_DAYS * DAY_MS).toISOString();
  let deleted = 0;
  for (;;) {
    const due = await repo.filesDueForDeletion(before, BATCH);
    for (const { id } of due) {
      // The file first: a crash between the two leaves a row that is deleted again, never a file no row points at.
      await deps.files.remove(id);
      await repo.markFileDeleted(id, now.toISOString());
    }
    deleted += due.length;
    if (due.length < BATCH) break;
  }
  return { deleted, orphans: await removeOrphans(deps, now.getTime()) };
}

async function removeOrphans(deps: ImportFileRetentionDeps, nowMs: number): Promise<number> {
  const old = (await deps.files.list()).filter((f) => nowMs - f.modifiedMs > ORPHAN_AGE_MS);
  let removed = 0;
  for (let i = 0; i < old.length; i += BATCH) {
    const names = old.slice(i, i + BATCH).map((f) => f.name);
    const owned = await contactImportsRepo(deps.db).withLiveFiles(names);
    for (const name of names.filter((n) => !owned.has(n))) {
      await deps.files.remove(name);
      removed++;
    }
  }
  return removed;
}
