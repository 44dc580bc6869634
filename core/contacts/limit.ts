import type { Db } from '../../storage/sql/index.js';
import { contactsRepo } from '../../storage/repos/index.js';
import { validationError } from '../errors.js';

/**
 * The most contacts a team may hold (0: no limit), read through the caller's connection: asked
 * inside a write transaction, a read on another connection would wait for that transaction.
 */
export type ContactLimitOf = (db: Db, teamId: string) => Promise<number>;

/**
 * The team's plan answers (its `contacts` limit); a plan without one falls back to the
 * `contacts_limit` config key, so a single-company install sets one number for everyone.
 */
export const planContactLimit = (planLimit: (db: Db, teamId: string) => Promise<number | null>, fallback: number): ContactLimitOf =>
  async (db, teamId) => (await planLimit(db, teamId)) ?? fallback;

/**
 * Refuses one more contact past the limit (rule 7). Contacts added from sends are not counted
 * (rule 4). Call in the transaction that adds it: SQLite's write lock, and on PostgreSQL the
 * team's row locked by the count, make count-then-insert exact when two creates race.
 */
export async function checkContactLimit(trx: Db, teamId: string, limitOf: ContactLimitOf): Promise<void> {
  const limit = await limitOf(trx, teamId);
  if (limit <= 0) return;
  if ((await contactsRepo(trx).countCounted(teamId)) >= limit) throw validationError(422, undefined, 'Contact limit reached.');
}
