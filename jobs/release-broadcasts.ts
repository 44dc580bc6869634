import { releaseDueBroadcasts, type ReleaseBroadcastsDeps } from '../core/broadcasts/index.js';
import type { Job } from './scheduler.js';

/**
 * Every minute: scheduled broadcasts whose time came are released (queued), and every queued or
 * sending broadcast is sure to have its fan-out item. The fan-out itself is durable work.
 */
export function releaseBroadcastsJob(deps: ReleaseBroadcastsDeps): Job {
  return {
    name: 'release-broadcasts',
    schedule: '* * * * *',
    leaseMs: 55_000,
    run: () => releaseDueBroadcasts(deps),
  };
}
