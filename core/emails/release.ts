import type { Db } from '../../storage/sql/index.js';
import { dispatchScheduled, dueScheduled } from '../../storage/repos/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';

export interface ReleaseDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  wake(region: string): void;
}

/**
 * Scheduled emails whose time has come move to the outbound queue. From this moment an email is
 * locked: cancel and reschedule answer 409 resource_locked (its status is `dispatched`). Returns
 * how many were released.
 */
export async function releaseDueScheduled(deps: ReleaseDeps, limit = 500): Promise<number> {
  const now = deps.clock.now().toISOString();
  const due = await dueScheduled(deps.db, now, limit);
  if (due.length === 0) return 0;
  const released = await inWriteTransaction(deps.db, async (trx) => {
    const done: typeof due = [];
    for (const email of due) if (await dispatchScheduled(trx, email.id, now)) done.push(email);
    return done;
  });
  for (const email of released) deps.logger.info({ emailId: email.id, teamId: email.team_id, region: email.region, scheduledAt: email.scheduled_at }, 'scheduled email released to the queue');
  for (const region of new Set(released.map((e) => e.region))) deps.wake(region);
  return released.length;
}
