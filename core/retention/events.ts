import type { Db } from '../../storage/sql/index.js';
import { retentionRepo } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { ROLLUP_CURSOR } from '../metrics/index.js';
import { DISPATCH_CURSOR } from '../webhooks/index.js';
import { daysBefore } from '../time.js';

// The event outbox is read by its consumers, each from its own cursor: the webhook fan-out and the
// metrics rollup. An event may go once (a) every consumer has read it, (b) no webhook message refers
// to it (a message re-reads its event to send, retry or replay; finished messages are pruned after
// webhooks_retention_days, which frees theirs) and (c) it is older than the window. Nothing else
// reads old events: emails' last_event is a column, metrics read the rollups, and a new endpoint
// starts after the newest event (seq is AUTOINCREMENT, never reused after a delete).

/** The consumers that must have read an event; any other cursor row found is respected too. */
export const OUTBOX_CONSUMERS: readonly string[] = [DISPATCH_CURSOR, ROLLUP_CURSOR];

const BATCH = 1000;

export interface EventsPruneResult {
  /** Events deleted. */
  deleted: number;
  /** Events past the window and read by every consumer but kept: a webhook message refers to them. */
  kept_referenced: number;
  /** The lowest consumer cursor: nothing after it was considered. */
  cursor: number;
}

/**
 * Deletes outbox events past the window that every consumer has read and no webhook message needs,
 * one statement per batch of sequence numbers. Returns what it did, for the job's log line.
 */
export async function pruneEvents(db: Db, clock: Clock, retentionDays: number): Promise<EventsPruneResult> {
  const before = daysBefore(clock.now(), retentionDays);
  const repo = retentionRepo(db);
  const cursor = await repo.lowestCursor(OUTBOX_CONSUMERS);
  const result: EventsPruneResult = { deleted: 0, kept_referenced: 0, cursor };
  let after = 0;
  for (;;) {
    const batch = await repo.eventsBetween(after, cursor, BATCH);
    // seq follows writing order, so the first event inside the window ends the walk (one written a
    // moment out of order waits for the next run).
    const young = batch.findIndex((e) => e.created_at >= before);
    const old = young === -1 ? batch : batch.slice(0, young);
    if (old.length === 0) return result;
    const upTo = old[old.length - 1]!.seq;
    const deleted = await repo.deleteUnreferencedEvents(after, upTo, before);
    result.deleted += deleted;
    result.kept_referenced += old.length - deleted;
    if (young !== -1 || batch.length < BATCH) return result;
    after = upTo;
  }
}
