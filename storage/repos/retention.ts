import { sql } from 'kysely';
import type { Db } from '../sql/db.js';
import { inTeamScope, type TeamScope } from '../sql/team-scope.js';
import type { DroppedReason } from './received-tables.js';

// SQL of the retention jobs: dropped received records past their window, outbox events every
// consumer is done with, the rows that tell a spool file is still owned, and consent records past
// their three years.

export interface DroppedRecord {
  id: string;
  team_id: string;
  dropped_reason: DroppedReason;
  raw_key: string | null;
}

export interface PrunableEvent {
  seq: number;
  created_at: string;
}

export interface RetentionRepo {
  /** Up to `limit` dropped records received before `before` (the partial index of migration 009). */
  droppedBefore(before: string, limit: number, scope: TeamScope): Promise<DroppedRecord[]>;
  /**
   * Deletes those records (and any attachment rows) — only while still dropped. Dropped records
   * never counted in received_usage, so the usage is left alone. Answers how many went.
   */
  deleteDropped(ids: readonly string[]): Promise<number>;
  /**
   * The lowest outbox position among the named consumers (one that never ran is at 0) and every
   * other cursor row there is: no reader's unread event is ever a candidate.
   */
  lowestCursor(names: readonly string[]): Promise<number>;
  /** Up to `limit` events after `afterSeq`, up to and including `maxSeq`, in order. */
  eventsBetween(afterSeq: number, maxSeq: number, limit: number): Promise<PrunableEvent[]>;
  /**
   * Deletes the events with seq in (afterSeq, maxSeq] created before `before` that no webhook
   * message refers to (a message needs its event to be sent, retried or replayed).
   */
  deleteUnreferencedEvents(afterSeq: number, maxSeq: number, before: string): Promise<number>;
  /** The raw_key of each id that has a received record (ids without one are absent). */
  rawKeysOf(ids: readonly string[]): Promise<Map<string, string | null>>;
  /** Deletes up to `limit` consent records written before `before`, oldest first; answers how many. */
  deleteConsentBefore(before: string, limit: number): Promise<number>;
}

export function retentionRepo(db: Db): RetentionRepo {
  return {
    droppedBefore: (before, limit, scope) => db.selectFrom('received_emails')
      .select(['id', 'team_id', 'dropped_reason', 'raw_key'])
      .where('dropped_reason', 'is not', null).where('created_at', '<', before).where((eb) => inTeamScope(eb, 'team_id', scope))
      .orderBy('created_at').limit(limit).execute() as Promise<DroppedRecord[]>,
    async deleteDropped(ids) {
      if (ids.length === 0) return 0;
      await db.deleteFrom('received_attachments').where('email_id', 'in', [...ids]).execute();
      const r = await db.deleteFrom('received_emails').where('id', 'in', [...ids]).where('dropped_reason', 'is not', null).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
    async lowestCursor(names) {
      const rows = await db.selectFrom('outbox_cursors').select(['name', 'seq']).execute();
      const at = new Map(rows.map((r) => [r.name, Number(r.seq)]));
      return Math.min(...names.map((n) => at.get(n) ?? 0), ...at.values());
    },
    eventsBetween: (afterSeq, maxSeq, limit) => db.selectFrom('events').select(['seq', 'created_at'])
      .where('seq', '>', afterSeq).where('seq', '<=', maxSeq).orderBy('seq').limit(limit).execute(),
    async deleteUnreferencedEvents(afterSeq, maxSeq, before) {
      // Messages are found through the team's endpoints and the (endpoint_id, event_id) unique
      // index: a few index probes per event, no scan of webhook_deliveries.
      const r = await db.deleteFrom('events')
        .where('seq', '>', afterSeq).where('seq', '<=', maxSeq).where('created_at', '<', before)
        .where(({ not, exists, selectFrom }) => not(exists(
          selectFrom('webhook_endpoints as e')
            .innerJoin('webhook_deliveries as d', 'd.endpoint_id', 'e.id')
            .select(sql<number>`1`.as('one'))
            .whereRef('e.team_id', '=', 'events.team_id')
            .whereRef('d.event_id', '=', 'events.id'),
        )))
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
    async rawKeysOf(ids) {
      const out = new Map<string, string | null>();
      for (let i = 0; i < ids.length; i += 500) {
        const rows = await db.selectFrom('received_emails').select(['id', 'raw_key']).where('id', 'in', ids.slice(i, i + 500)).execute();
        for (const r of rows) out.set(r.id, r.raw_key);
      }
      return out;
    },
    async deleteConsentBefore(before, limit) {
      const r = await db.deleteFrom('consent_records')
        .where('id', 'in', db.selectFrom('consent_records').select('id').where('created_at', '<', before).orderBy('created_at').limit(limit))
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
