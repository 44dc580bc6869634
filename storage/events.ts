import { compiledInsert } from './compiled-insert.js';
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
    insert: (event) => insertEvent(db)(db, event),
    after: (seq, limit) => db.selectFrom('events').selectAll().where('seq', '>', seq).orderBy('seq').limit(limit).execute(),
    byId: (teamId, id) => db.selectFrom('events').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
  };
}

// Every change of a message writes an event: one insert compiled once per dialect (the adapter is
// shared by a database and its transactions) instead of built per call.
const compiledEventInserts = new WeakMap<object, (conn: Db, row: NewEvent) => Promise<void>>();

function insertEvent(db: Db): (conn: Db, row: NewEvent) => Promise<void> {
  const adapter = db.getExecutor().adapter;
  let insert = compiledEventInserts.get(adapter);
  if (!insert) {
    insert = compiledInsert<NewEvent>(db, 'events', ['id', 'team_id', 'type', 'created_at', 'data']);
    compiledEventInserts.set(adapter, insert);
  }
  return insert;
}
