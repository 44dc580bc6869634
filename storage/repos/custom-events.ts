import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { containsPattern, paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { CustomEventRow, EventDefinitionRow } from './automations-tables.js';

// Custom event definitions, accepted events and the browsers store events are tied by (migration 022).

export interface EventDefinitionsRepo {
  /** Inserts unless a live definition of the team has the name; answers whether it inserted. */
  insertIfAbsent(row: EventDefinitionRow): Promise<boolean>;
  byId(teamId: string, id: string): Promise<EventDefinitionRow | undefined>;
  byName(teamId: string, name: string): Promise<EventDefinitionRow | undefined>;
  /** Live definitions among these names. */
  byNames(teamId: string, names: readonly string[]): Promise<EventDefinitionRow[]>;
  list(teamId: string, search: string | undefined, page: PageQuery): Promise<Page<EventDefinitionRow>>;
  setSchema(teamId: string, id: string, schema: string | null, at: string): Promise<void>;
  markDeleted(teamId: string, id: string, at: string): Promise<boolean>;
}

export function eventDefinitionsRepo(db: Db): EventDefinitionsRepo {
  const live = () => db.selectFrom('event_definitions').selectAll().where('deleted_at', 'is', null);
  return {
    async insertIfAbsent(row) {
      const r = await db.insertInto('event_definitions').values(row)
        .onConflict((oc) => oc.columns(['team_id', 'name']).where('deleted_at', 'is', null).doNothing()).executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    byId: (teamId, id) => live().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    // Compiled once: every event sent names its definition.
    async byName(teamId, name) {
      const select = shapedStatement(db, 'event_definitions.byName', (m) => live().where('team_id', '=', m('team')).where('name', '=', m('name')));
      return (await select(db, { team: teamId, name })).rows[0] as EventDefinitionRow | undefined;
    },
    byNames: async (teamId, names) => names.length === 0 ? [] : live().where('team_id', '=', teamId).where('name', 'in', [...names]).execute(),
    list(teamId, search, page) {
      let q = live().where('team_id', '=', teamId);
      // Names are lower-case by rule: a lower-cased pattern is a case-insensitive search.
      if (search !== undefined) q = q.where('name', 'like', containsPattern(search.toLowerCase()));
      return paginate(db, q, 'id', page);
    },
    async setSchema(teamId, id, schema, at) {
      await db.updateTable('event_definitions').set({ schema, updated_at: at }).where('team_id', '=', teamId).where('id', '=', id).execute();
    },
    async markDeleted(teamId, id, at) {
      const r = await db.updateTable('event_definitions').set({ deleted_at: at, updated_at: at })
        .where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
  };
}

export interface CustomEventsRepo {
  /** Inserts unless the team already has an event with its idempotency key; answers whether it inserted. */
  insertIfNew(row: CustomEventRow): Promise<boolean>;
  /** The contact a browser is tied to. */
  browserContact(teamId: string, anonymousId: string): Promise<string | undefined>;
  /** Ties a browser to a contact (the first tie stands). */
  tieBrowser(teamId: string, anonymousId: string, contactId: string, at: string): Promise<void>;
  /** Store events waiting with the browser: given the contact, answered oldest first. */
  claimWaiting(teamId: string, anonymousId: string, contactId: string): Promise<CustomEventRow[]>;
}

export function customEventsRepo(db: Db): CustomEventsRepo {
  return {
    async insertIfNew(row) {
      if (row.idempotency_key === null) {
        const columns = Object.keys(row) as (keyof CustomEventRow)[];
        const insert = shapedStatement(db, `custom_events.insert|${columns.join(',')}`, (m) => db.insertInto('custom_events')
          .values(Object.fromEntries(columns.map((c) => [c, m(c)])) as unknown as CustomEventRow));
        await insert(db, row as unknown as Record<string, unknown>);
        return true;
      }
      const r = await db.insertInto('custom_events').values(row)
        .onConflict((oc) => oc.columns(['team_id', 'idempotency_key']).where('idempotency_key', 'is not', null).doNothing()).executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async browserContact(teamId, anonymousId) {
      const row = await db.selectFrom('store_browsers').select('contact_id').where('team_id', '=', teamId).where('anonymous_id', '=', anonymousId).executeTakeFirst();
      return row?.contact_id;
    },
    async tieBrowser(teamId, anonymousId, contactId, at) {
      await db.insertInto('store_browsers').values({ team_id: teamId, anonymous_id: anonymousId, contact_id: contactId, created_at: at })
        .onConflict((oc) => oc.columns(['team_id', 'anonymous_id']).doNothing()).execute();
    },
    async claimWaiting(teamId, anonymousId, contactId) {
      const waiting = await db.selectFrom('custom_events').selectAll().where('team_id', '=', teamId).where('anonymous_id', '=', anonymousId)
        .where('contact_id', 'is', null).orderBy('id').execute();
      if (waiting.length === 0) return [];
      await db.updateTable('custom_events').set({ contact_id: contactId }).where('id', 'in', waiting.map((w) => w.id)).execute();
      return waiting.map((w) => ({ ...w, contact_id: contactId }));
    },
  };
}
