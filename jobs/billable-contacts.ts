import type { Clock } from '../core/clock.js';
import { sampleAllBillableContacts } from '../core/team/index.js';
import type { Db } from '../storage/sql/index.js';
import type { Job } from './scheduler.js';

/** Hourly: each team's billable contacts counted, so the month's peak holds a rise between reads. */
export function sampleBillableContactsJob(db: Db, clock: Clock): Job {
  return {
    name: 'sample-billable-contacts',
    schedule: '17 * * * *',
    leaseMs: 30 * 60_000,
    run: async () => ({ ...await sampleAllBillableContacts(db, clock.now()) }),
  };
}
