import type { RequestLogsRepo } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { pruneByWindows, type RetentionWindows } from '../retention-windows.js';

const BATCH = 1000;

/** Deletes request logs older than each team's retention window, in short batches. Returns the count. */
export async function pruneRequestLogs(repo: RequestLogsRepo, clock: Clock, windows: RetentionWindows): Promise<number> {
  return pruneByWindows(windows, clock.now(), async (cutoff, scope) => {
    let total = 0;
    for (;;) {
      const deleted = await repo.deleteOlderThan(cutoff, BATCH, scope);
      total += deleted;
      if (deleted < BATCH) return total;
    }
  });
}
