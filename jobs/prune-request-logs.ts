import type { Clock } from '../core/clock.js';
import type { RetentionWindowsOf } from '../core/retention-windows.js';
import { pruneRequestLogs } from '../core/request-logs/index.js';
import type { RequestLogsRepo } from '../storage/repos/index.js';
import type { Job } from './scheduler.js';

/** Hourly: request logs past their team's retention window (its plan's, else `retentionDays`) are deleted. */
export function pruneRequestLogsJob(repo: RequestLogsRepo, clock: Clock, windowsOf: RetentionWindowsOf, retentionDays: number): Job {
  return {
    name: 'prune-request-logs',
    schedule: '17 * * * *',
    leaseMs: 10 * 60_000,
    run: async () => pruneRequestLogs(repo, clock, await windowsOf(retentionDays)),
  };
}
