import type { Clock } from '../core/clock.js';
import { pruneWebhookMessages } from '../core/webhooks/index.js';
import type { Db } from '../storage/sql/index.js';
import type { Job } from './scheduler.js';

/** Hourly: finished webhook messages past the retention window are deleted with their attempts. */
export function pruneWebhookMessagesJob(db: Db, clock: Clock, retentionDays: number): Job {
  return {
    name: 'prune-webhook-messages',
    schedule: '23 * * * *',
    leaseMs: 10 * 60_000,
    run: () => pruneWebhookMessages(db, clock, retentionDays),
  };
}
