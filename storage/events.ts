import { shapedStatement } from './compiled.js';
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
    // Every change of a message writes one: compiled once, not built per call.
    async insert(event) {
      const insert = shapedStatement(db, 'events.insert', (m) => db.insertInto('events')
        .values({ id: m('id'), team_id: m('team_id'), type: m('type'), created_at: m('created_at'), data: m('data') }));
      await insert(db, event);
    },
    after: (seq, limit) => db.selectFrom('events').selectAll().where('seq', '>', seq).orderBy('seq').limit(limit).execute(),
    byId: (teamId, id) => db.selectFrom('events').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
  };
}
