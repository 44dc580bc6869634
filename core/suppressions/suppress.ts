import type { Db } from '../../storage/sql/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { suppressionsRepo, type SuppressionOrigin, type SuppressionRow, type SuppressionsRepo } from '../../storage/repos/index.js';
import { isoNow, type Clock } from '../clock.js';
import { emitEvent } from '../outbox/index.js';
import { newId } from '../ids.js';

// What the sending, bounce, complaint and unsubscribe paths use. Addresses are compared as the
// whole address lower-cased: mailbox local parts are case-sensitive by the RFC, but no real mailbox
// provider treats them so, and a suppression that "Bob@x.com" slips past is the worse failure.

/** The key an address is suppressed under: the whole address, trimmed and lower-cased. */
export const suppressionKey = (email: string): string => email.trim().toLowerCase();

/** Answers whether the team suppresses the address, and why. */
export async function isSuppressed(repo: Pick<SuppressionsRepo, 'byEmailKey'>, teamId: string, email: string): Promise<{ origin: SuppressionOrigin; id: string } | undefined> {
  const row = await repo.byEmailKey(teamId, suppressionKey(email));
  return row ? { origin: row.origin, id: row.id } : undefined;
}

export interface AddedSuppression {
  id: string;
  /** False when the address was already suppressed (nothing written, no event). */
  created: boolean;
}

/**
 * Suppresses an address for a team. Call with a transaction's `Db`: the row and its
 * `suppression.added` event commit with the caller's change. Idempotent: an address already on
 * the list keeps its first record (and origin) and no event is written.
 */
export async function addSuppression(
  trx: Db, teamId: string, email: string, origin: SuppressionOrigin, sourceId: string | null, clock: Clock,
): Promise<AddedSuppression> {
  const repo = suppressionsRepo(trx);
  const row: SuppressionRow = {
    id: newId(), team_id: teamId, email: email.trim(), email_key: suppressionKey(email), origin, source_id: sourceId, created_at: isoNow(clock),
  };
  if (await repo.insertIfAbsent(row)) {
    await emitEvent(eventsRepo(trx), teamId, 'suppression.added', suppressionEventData(row), clock.now());
    return { id: row.id, created: true };
  }
  const existing = await repo.byEmailKey(teamId, row.email_key);
  if (!existing) throw new Error('suppressions: insert ignored but no row found');
  return { id: existing.id, created: false };
}

/** Lifts a suppression inside the caller's transaction, writing `suppression.removed`. */
export async function removeSuppression(trx: Db, row: SuppressionRow, clock: Clock): Promise<boolean> {
  if (!(await suppressionsRepo(trx).delete(row.team_id, row.id))) return false;
  await emitEvent(eventsRepo(trx), row.team_id, 'suppression.removed', suppressionEventData(row), clock.now());
  return true;
}

/** `data` of suppression.added / suppression.removed: the record as the API shows it. */
export function suppressionEventData(row: SuppressionRow): Record<string, unknown> {
  return { id: row.id, email: row.email, origin: row.origin, source_id: row.source_id, created_at: row.created_at };
}
