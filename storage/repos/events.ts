import { sql } from 'kysely';
import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { isPostgres } from '../sql/dialect.js';
import type { EventRow } from '../sql/tables.js';

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
      if (isPostgres(db)) return insertSerialized(db, event);
      const insert = shapedStatement(db, 'events.insert', (m) => db.insertInto('events')
        .values({ id: m('id'), team_id: m('team_id'), type: m('type'), created_at: m('created_at'), data: m('data') }));
      await insert(db, event);
    },
    after: (seq, limit) => db.selectFrom('events').selectAll().where('seq', '>', seq).orderBy('seq').limit(limit).execute(),
    byId: (teamId, id) => db.selectFrom('events').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
  };
}

/** The advisory lock key every PostgreSQL event insert takes (any fixed number; "svc outbox"). */
const OUTBOX_LOCK = 0x5356_4301;

/**
 * Consumers (webhook fan-out, metrics rollup) read "events after the seq I reached", so a seq must
 * never become visible after a higher one: that event would be skipped for good. SQLite has one
 * writer at a time, so seq order is commit order. PostgreSQL hands out identity values as rows are
 * inserted, and concurrent transactions may commit in another order. Every event insert therefore
 * first takes one transaction-scoped advisory lock, held until its transaction ends: the
 * transactions that write events commit one after another, in seq order. In the same statement,
 * so an insert outside a transaction is covered too. Writes without events do not take it.
 */
async function insertSerialized(db: Db, event: NewEvent): Promise<void> {
  await sql`with outbox_lock as (select pg_advisory_xact_lock(${sql.lit(OUTBOX_LOCK)}))
    insert into events (id, team_id, type, created_at, data)
    select ${event.id}::text, ${event.team_id}::text, ${event.type}::text, ${event.created_at}::text, ${event.data}::text from outbox_lock`.execute(db);
}
