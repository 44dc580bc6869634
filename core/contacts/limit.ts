import type { Db } from '../../storage/sql/index.js';
import { contactsRepo } from '../../storage/repos/index.js';
import { validationError } from '../errors.js';

/**
 * The most contacts a team may hold (0: no limit). Today the `contacts_limit` config key for every
 * team; the plans will answer it per team.
 */
export type ContactLimitOf = (teamId: string) => Promise<number>;

export const fixedContactLimit = (limit: number): ContactLimitOf => async () => limit;

/**
 * Refuses one more contact past the limit (rule 7). Contacts added from sends are not counted
 * (rule 4). Call in the transaction that adds it. On SQLite the write lock makes count-then-insert
 * exact; on PostgreSQL two creates racing for the last place may both pass (a soft limit by one
 * or two until the plans lock the team's row).
 */
export async function checkContactLimit(trx: Db, teamId: string, limitOf: ContactLimitOf): Promise<void> {
  const limit = await limitOf(teamId);
  if (limit <= 0) return;
  if ((await contactsRepo(trx).countCounted(teamId)) >= limit) throw validationError(422, undefined, 'Contact limit reached.');
}
