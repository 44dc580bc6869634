import type { RequestLogsRepo } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { daysBefore } from '../time.js';

/** Deletes request logs older than the retention window, in short batches. Returns the count. */
export async function pruneRequestLogs(repo: RequestLogsRepo, clock: Clock, retentionDays: number): Promise<number> {
  const cutoff = daysBefore(clock.now(), retentionDays);
  let total = 0;
  for (;;) {
    const deleted = await repo.deleteOlderThan(cutoff, 1000);
    total += deleted;
    if (deleted < 1000) return total;
  }
}
