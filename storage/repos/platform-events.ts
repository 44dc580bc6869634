import type { Db } from '../sql/db.js';
import type { PlatformEventRow } from './contacts-tables.js';

export type { PlatformEventRow };

// The internal stream of platform events (svc:contact.created, svc:topic.*) that automations
// are started by. Written in the transaction of the change; read by core/automations (enrol.ts).

export interface PlatformEventsRepo {
  insert(row: PlatformEventRow): Promise<void>;
  /** Oldest first, after an event id (time-ordered ids). */
  ofTeam(teamId: string, afterId: string | null, limit: number): Promise<PlatformEventRow[]>;
}

export function platformEventsRepo(db: Db): PlatformEventsRepo {
  return {
    async insert(row) {
      await db.insertInto('platform_events').values(row).execute();
    },
    ofTeam(teamId, afterId, limit) {
      let q = db.selectFrom('platform_events').selectAll().where('team_id', '=', teamId);
      if (afterId !== null) q = q.where('id', '>', afterId);
      return q.orderBy('id').limit(limit).execute();
    },
  };
}
