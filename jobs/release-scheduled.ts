import type { ReleaseDeps } from '../core/emails/index.js';
import { releaseDueScheduled } from '../core/emails/index.js';
import type { Job } from './scheduler.js';

/**
 * Every minute: scheduled emails that are due join their region's outbound queue and the queue
 * is woken. The outbound role also releases them on its own timer at the exact due time; this job
 * is the wake-up when no outbound process holds a timer for the region (or one restarted).
 */
export function releaseScheduledJob(deps: ReleaseDeps): Job {
  return {
    name: 'release-scheduled',
    schedule: '* * * * *',
    leaseMs: 55_000,
    run: () => releaseDueScheduled(deps),
  };
}
