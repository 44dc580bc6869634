import type { Db } from '../../storage/sql/index.js';
import { retentionRepo } from '../../storage/repos/index.js';
import type { Spool } from '../../storage/files/index.js';
import { FOLDER_SPAN_MS, folderStartMs, modifiedAtMs, receivedFolders, receivedNames, removeIfEmpty } from '../../storage/files/index.js';
import type { Clock } from '../clock.js';

// Received mail is written straight at its record's name under received/ and fsynced before the
// record commits (storage/files/spool.ts), so a crash between the two leaves a raw file no record names;
// so does one between a commit and the unlink that follows it (a dropped record's raw source, a
// deleted message, a pruned drop). sweepIncoming only looks at incoming/. This sweep removes files
// under received/ that no record owns (no row with that id, or a row whose raw_key is not this
// name) once the file is older than `olderThanMs`: a file still waiting for its commit is seconds old.

/** A file younger than this is never an orphan: its commit may still be on the way. */
export const ORPHAN_MIN_AGE_MS = 60 * 60 * 1000;
/** Empty per-minute folders older than this are removed (no writer uses a folder that old). */
const EMPTY_FOLDER_AGE_MS = 24 * 60 * 60 * 1000;

export interface OrphanSweepResult {
  folders: number;
  files: number;
  removed: number;
  empty_folders_removed: number;
}

export interface OrphanSweepOptions {
  olderThanMs?: number;
  /** Only folders whose minute ends after this instant (the periodic sweep); all when unset. */
  sinceMs?: number;
  /** Stops the walk between folders (the role is stopping). */
  signal?: AbortSignal;
}

export async function sweepOrphanRaw(deps: { db: Db; spool: Spool; clock: Clock }, options: OrphanSweepOptions = {}): Promise<OrphanSweepResult> {
  const olderThanMs = options.olderThanMs ?? ORPHAN_MIN_AGE_MS;
  const now = deps.clock.now().getTime();
  const repo = retentionRepo(deps.db);
  const result: OrphanSweepResult = { folders: 0, files: 0, removed: 0, empty_folders_removed: 0 };
  for (const folder of await receivedFolders(deps.spool.dir, options.sinceMs)) {
    if (options.signal?.aborted) break;
    result.folders++;
    const names = await receivedNames(deps.spool.dir, folder);
    result.files += names.length;
    const owners = await repo.rawKeysOf(names.map((n) => n.id));
    let left = names.length;
    for (const { key, id } of names) {
      if (owners.get(id) === key) continue;
      const modified = await modifiedAtMs(deps.spool.dir, key);
      if (modified === undefined || now - modified <= olderThanMs) continue;
      await deps.spool.remove(key);
      result.removed++;
      left--;
    }
    if (left === 0 && now - (folderStartMs(folder) + FOLDER_SPAN_MS) > EMPTY_FOLDER_AGE_MS && await removeIfEmpty(deps.spool.dir, folder)) {
      result.empty_folders_removed++;
    }
  }
  return result;
}
