import type { Db } from './db.js';
import type { EventRow } from './tables.js';

export type NewEvent = Omit<EventRow, 'seq'>;
export type StoredEvent = Omit<EventRow, 'seq'> & { seq: number };

export interface EventsRepo {
  /** Call inside the transaction that makes the change the event reports. */
  insert(event: NewEvent): Promise<void>;
  /** Events after a sequence number, in order, for consumers that keep their own position. */
  after(seq: number, limit: number): Promise<StoredEvent[]>;
  byId(teamId: string, id: string): Promise<StoredEvent | undefined>;
}

export function eventsRepo(db: Db): EventsRepo {
  return {
    async insert(event) {
      await db.insertInto('events').values(event).execute();
    },
    after: (seq, limit) => db.selectFrom('events').selectAll().where('seq', '>', seq).orderBy('seq').limit(limit).execute(),
    byId: (teamId, id) => db.selectFrom('events').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
  };
}
