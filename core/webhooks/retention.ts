import type { Db } from '../../storage/sql/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { webhooksRepo } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { daysBefore } from '../time.js';

/**
 * Deletes delivered and failed messages (and their attempts) untouched for `retentionDays`, in short
 * transactions. Waiting messages are kept whatever their age. Returns the number of messages removed.
 */
export async function pruneWebhookMessages(db: Db, clock: Clock, retentionDays: number): Promise<number> {
  const before = daysBefore(clock.now(), retentionDays);
  let total = 0;
  for (;;) {
    const removed = await inTransaction(db, (trx) => webhooksRepo(trx).pruneFinished(before, 500));
    total += removed;
    if (removed < 500) return total;
  }
}
