import type { Kysely } from 'kysely';
import { runChunked, valuesOf } from '../sql/chunked.js';
import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import type {
  ConsentRecordRow, ContactPropertyValueRow, ContactRow, ContactTopicRow, PlatformEventRow,
} from './contacts-tables.js';

// The audience's writes for many contacts at once (contact imports), in chunked statements
// compiled once per chunk size (256, 64, 16, 4, 1 rows: sql/chunked.ts).

const contactColumns = [
  'id', 'team_id', 'email', 'email_key', 'first_name', 'last_name', 'subscription_status', 'origin', 'created_at', 'updated_at',
] as const;
const valueColumns = ['contact_id', 'key', 'team_id', 'text_value', 'num_value'] as const;
const choiceColumns = ['contact_id', 'topic_id', 'team_id', 'subscription', 'updated_at'] as const;
const consentColumns = ['id', 'team_id', 'contact_id', 'email_hash', 'kind', 'topic_id', 'value', 'source', 'ip', 'user_agent', 'created_at'] as const;
const platformColumns = ['id', 'team_id', 'type', 'contact_id', 'data', 'created_at'] as const;

export interface ContactsBatchRepo {
  /** The team's contacts with these address keys. */
  byEmailKeys(teamId: string, emailKeys: readonly string[]): Promise<ContactRow[]>;
  /** Inserts the rows whose address the team does not have yet; answers the keys it inserted. */
  insertNew(rows: readonly ContactRow[]): Promise<Set<string>>;
  /** Rewrites each contact's fields (the row as it should now be). */
  rewrite(rows: readonly ContactRow[]): Promise<void>;
  /** Sets property values, replacing a contact's value for the same key. */
  setValues(rows: readonly ContactPropertyValueRow[]): Promise<void>;
  /** The explicit topic choices of these contacts. */
  choicesOf(contactIds: readonly string[]): Promise<Pick<ContactTopicRow, 'contact_id' | 'topic_id' | 'subscription'>[]>;
  setChoices(rows: readonly ContactTopicRow[]): Promise<void>;
  insertConsent(rows: readonly ConsentRecordRow[]): Promise<void>;
  insertPlatformEvents(rows: readonly PlatformEventRow[]): Promise<void>;
}

export function contactsBatchRepo(typed: Db): ContactsBatchRepo {
  // Statements built from column lists with markers for values: the row types cannot follow them.
  const db = typed as unknown as Kysely<any>;
  const insert = <T extends object>(key: string, table: string, columns: readonly string[], rows: readonly T[]) =>
    runChunked(db, key, rows, (m, size) => db.insertInto(table).values(valuesOf(m, columns, size)));
  return {
    async byEmailKeys(teamId, emailKeys) {
      const rows = await runChunked(db, 'contacts-batch.byEmailKeys', emailKeys.map((key) => ({ key })),
        (m, size) => db.selectFrom('contacts').selectAll().where('team_id', '=', m('-1:team_id'))
          .where('email_key', 'in', Array.from({ length: size }, (_, i) => m(`${i}:key`))),
        { team_id: teamId });
      return rows as unknown as ContactRow[];
    },
    async insertNew(rows) {
      const inserted = await runChunked(db, 'contacts-batch.insertNew', rows,
        (m, size) => db.insertInto('contacts').values(valuesOf(m, contactColumns, size))
          .onConflict((oc) => oc.columns(['team_id', 'email_key']).doNothing()).returning('email_key'));
      return new Set(inserted.map((r) => String(r.email_key)));
    },
    async rewrite(rows) {
      const update = shapedStatement(db, 'contacts-batch.rewrite', (m) => db.updateTable('contacts').set({
        email: m('email'), first_name: m('first_name'), last_name: m('last_name'), subscription_status: m('subscription_status'),
        origin: m('origin'), updated_at: m('updated_at'),
      }).where('team_id', '=', m('team_id')).where('id', '=', m('id')));
      for (const row of rows) {
        await update(db, {
          email: row.email, first_name: row.first_name, last_name: row.last_name, subscription_status: row.subscription_status,
          origin: row.origin, updated_at: row.updated_at, team_id: row.team_id, id: row.id,
        });
      }
    },
    async setValues(rows) {
      await runChunked(db, 'contacts-batch.setValues', rows,
        (m, size) => db.insertInto('contact_property_values').values(valuesOf(m, valueColumns, size))
          .onConflict((oc) => oc.columns(['contact_id', 'key']).doUpdateSet((eb) => ({
            text_value: eb.ref('excluded.text_value'), num_value: eb.ref('excluded.num_value'),
          }))));
    },
    async choicesOf(contactIds) {
      const rows = await runChunked(db, 'contacts-batch.choicesOf', contactIds.map((id) => ({ id })),
        (m, size) => db.selectFrom('contact_topics').select(['contact_id', 'topic_id', 'subscription'])
          .where('contact_id', 'in', Array.from({ length: size }, (_, i) => m(`${i}:id`))));
      return rows as unknown as Pick<ContactTopicRow, 'contact_id' | 'topic_id' | 'subscription'>[];
    },
    async setChoices(rows) {
      await runChunked(db, 'contacts-batch.setChoices', rows,
        (m, size) => db.insertInto('contact_topics').values(valuesOf(m, choiceColumns, size))
          .onConflict((oc) => oc.columns(['contact_id', 'topic_id']).doUpdateSet((eb) => ({
            subscription: eb.ref('excluded.subscription'), updated_at: eb.ref('excluded.updated_at'),
          }))));
    },
    insertConsent: async (rows) => { await insert('contacts-batch.consent', 'consent_records', consentColumns, rows); },
    insertPlatformEvents: async (rows) => { await insert('contacts-batch.platformEvents', 'platform_events', platformColumns, rows); },
  };
}
