import { sql } from 'kysely';
import type { Db } from '../sql/db.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { ContactPropertyRow, PropertyType } from './contacts-tables.js';

export type { ContactPropertyRow, PropertyType };

export interface ContactPropertiesRepo {
  /** Inserts unless the team declares the key (in any case); answers whether it inserted. */
  insertIfAbsent(row: ContactPropertyRow): Promise<boolean>;
  byId(teamId: string, id: string): Promise<ContactPropertyRow | undefined>;
  /** By the key lower-cased. */
  byKeyFold(teamId: string, keyFold: string): Promise<ContactPropertyRow | undefined>;
  /** The definitions of these exact keys. */
  byKeys(teamId: string, keys: readonly string[]): Promise<ContactPropertyRow[]>;
  count(teamId: string): Promise<number>;
  list(teamId: string, page: PageQuery): Promise<Page<ContactPropertyRow>>;
  setFallback(teamId: string, id: string, fallbackJson: string | null): Promise<void>;
  /** Removes the definition and every contact's value for it. */
  delete(row: ContactPropertyRow): Promise<boolean>;
}

export function contactPropertiesRepo(db: Db): ContactPropertiesRepo {
  return {
    async insertIfAbsent(row) {
      const result = await db.insertInto('contact_properties').values(row)
        .onConflict((oc) => oc.columns(['team_id', 'key_fold']).doNothing()).executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    byId: (teamId, id) =>
      db.selectFrom('contact_properties').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    byKeyFold: (teamId, keyFold) =>
      db.selectFrom('contact_properties').selectAll().where('team_id', '=', teamId).where('key_fold', '=', keyFold).executeTakeFirst(),
    byKeys: async (teamId, keys) => keys.length === 0 ? [] :
      db.selectFrom('contact_properties').selectAll().where('team_id', '=', teamId).where('key_fold', 'in', keys.map((k) => k.toLowerCase())).execute(),
    async count(teamId) {
      const row = await db.selectFrom('contact_properties').select(sql<number>`count(*)`.as('n')).where('team_id', '=', teamId).executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    list: (teamId, page) => paginate(db, db.selectFrom('contact_properties').selectAll().where('team_id', '=', teamId), 'id', page),
    async setFallback(teamId, id, fallbackJson) {
      await db.updateTable('contact_properties').set({ fallback_value: fallbackJson }).where('team_id', '=', teamId).where('id', '=', id).execute();
    },
    async delete(row) {
      // By kind: each of the value indexes holds the rows of one (migration 038), and a row is of one.
      for (const column of ['text_value', 'num_value'] as const) {
        await db.deleteFrom('contact_property_values').where('team_id', '=', row.team_id).where('key', '=', row.key)
          .where(column, 'is not', null).execute();
      }
      const r = await db.deleteFrom('contact_properties').where('team_id', '=', row.team_id).where('id', '=', row.id).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
  };
}
