import type { Clock } from '../core/clock.js';
import { pruneRequestLogs } from '../core/request-logs/index.js';
import type { RequestLogsRepo } from '../storage/repos/index.js';
import type { Job } from './scheduler.js';

/** Hourly: request logs past the retention window are deleted. */
export function pruneRequestLogsJob(repo: RequestLogsRepo, clock: Clock, retentionDays: number): Job {
  return {
    name: 'prune-request-logs',
    schedule: '17 * * * *',
    leaseMs: 10 * 60_000,
    run: () => pruneRequestLogs(repo, clock, retentionDays),
  };
}
