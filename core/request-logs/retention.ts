import type { RequestLogsRepo } from '../../storage/request-logs.js';
import type { Clock } from '../clock.js';

/** Deletes request logs older than the retention window, in short batches. Returns the count. */
export async function pruneRequestLogs(repo: RequestLogsRepo, clock: Clock, retentionDays: number): Promise<number> {
  const cutoff = new Date(clock.now().getTime() - retentionDays * 86_400_000).toISOString();
  let total = 0;
  for (;;) {
    const deleted = await repo.deleteOlderThan(cutoff, 1000);
    total += deleted;
    if (deleted < 1000) return total;
  }
}
