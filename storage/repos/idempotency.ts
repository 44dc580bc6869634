import type { Db } from '../sql/db.js';
import type { IdempotencyKeyRow } from './emails-tables.js';

export type { IdempotencyKeyRow };

export interface IdempotencyRepo {
  /** The answered request under this key, unless it has expired. */
  find(teamId: string, key: string, now: string): Promise<IdempotencyKeyRow | undefined>;
  /** Inside the send's transaction; a conflict (a concurrent winner) throws. */
  insert(row: IdempotencyKeyRow): Promise<void>;
  prune(now: string): Promise<number>;
}

export function idempotencyRepo(db: Db): IdempotencyRepo {
  return {
    find: (teamId, key, now) =>
      db.selectFrom('idempotency_keys').selectAll().where('team_id', '=', teamId).where('key', '=', key).where('expires_at', '>', now).executeTakeFirst(),
    async insert(row) {
      // An expired row under the same key is replaced: the window is 24 hours.
      await db.deleteFrom('idempotency_keys').where('team_id', '=', row.team_id).where('key', '=', row.key).where('expires_at', '<=', row.created_at).execute();
      await db.insertInto('idempotency_keys').values(row).execute();
    },
    async prune(now) {
      const r = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}

/**
 * The error raised when a concurrent request committed the same key first: SQLite's "UNIQUE
 * constraint failed", PostgreSQL's unique_violation (SQLSTATE 23505).
 */
export const isUniqueViolation = (err: unknown) =>
  (err as { code?: unknown } | undefined)?.code === '23505' || /UNIQUE constraint failed/i.test(String((err as Error)?.message ?? err));
