import { sql, type Kysely } from 'kysely';
import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { isPostgres } from '../sql/dialect.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type {
  ContactOrigin, ContactPropertyValueRow, ContactRow, ContactTopicRow, PropertyType, SubscriptionStatus,
} from './contacts-tables.js';

export type { ContactOrigin, ContactRow, SubscriptionStatus };

/** One stored value with its property's declared type. */
export interface TypedValueRow {
  key: string;
  type: PropertyType;
  text_value: string | null;
  num_value: number | null;
}

export type ContactChange = Partial<Pick<ContactRow, 'email' | 'email_key' | 'first_name' | 'last_name' | 'subscription_status' | 'origin'>> & { updated_at: string };

export interface ContactsRepo {
  byId(teamId: string, id: string): Promise<ContactRow | undefined>;
  byEmailKey(teamId: string, emailKey: string): Promise<ContactRow | undefined>;
  /** The team's contacts among these lower-cased addresses: id and address key only. */
  idsByEmailKeys(teamId: string, emailKeys: readonly string[]): Promise<{ id: string; email_key: string }[]>;
  /** Inserts unless the team has a contact with the address; answers whether it inserted. */
  insertIfAbsent(row: ContactRow): Promise<boolean>;
  update(teamId: string, id: string, change: ContactChange): Promise<void>;
  list(teamId: string, page: PageQuery): Promise<Page<ContactRow>>;
  /** Contacts counted toward the limit: all but those added from sends. */
  /** Contacts that count toward the limit; on PostgreSQL also locks the team's row (call in the adding transaction). */
  countCounted(teamId: string): Promise<number>;
  values(teamId: string, contactId: string): Promise<TypedValueRow[]>;
  setValue(row: ContactPropertyValueRow): Promise<void>;
  deleteValue(contactId: string, key: string): Promise<void>;
  choices(contactId: string): Promise<ContactTopicRow[]>;
  setChoice(row: ContactTopicRow): Promise<void>;
  /** Removes the contact, its property values, its topic choices and its segment memberships. */
  erase(teamId: string, id: string): Promise<boolean>;
}

export function contactsRepo(db: Db): ContactsRepo {
  return {
    // Compiled once: every event sent and every automation step looks a contact up.
    async byId(teamId, id) {
      const select = shapedStatement(db, 'contacts.byId', (m) => db.selectFrom('contacts').selectAll().where('team_id', '=', m('team')).where('id', '=', m('id')));
      return (await select(db, { team: teamId, id })).rows[0] as ContactRow | undefined;
    },
    async byEmailKey(teamId, emailKey) {
      const select = shapedStatement(db, 'contacts.byEmailKey', (m) => db.selectFrom('contacts').selectAll().where('team_id', '=', m('team')).where('email_key', '=', m('key')));
      return (await select(db, { team: teamId, key: emailKey })).rows[0] as ContactRow | undefined;
    },
    idsByEmailKeys: async (teamId, emailKeys) => emailKeys.length === 0 ? [] : db.selectFrom('contacts').select(['id', 'email_key'])
      .where('team_id', '=', teamId).where('email_key', 'in', [...emailKeys]).execute(),
    async insertIfAbsent(row) {
      const result = await db.insertInto('contacts').values(row)
        .onConflict((oc) => oc.columns(['team_id', 'email_key']).doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async update(teamId, id, change) {
      await db.updateTable('contacts').set(change).where('team_id', '=', teamId).where('id', '=', id).execute();
    },
    list: (teamId, page) => paginate(db, db.selectFrom('contacts').selectAll().where('team_id', '=', teamId), 'id', page),
    async countCounted(teamId) {
      // On PostgreSQL the team's row is the lock two creates racing for the last place queue on
      // (SQLite's one writer already serialises them), so count-then-insert stays exact.
      if (isPostgres(db)) await db.selectFrom('teams').select('id').where('id', '=', teamId).forUpdate().execute();
      const row = await db.selectFrom('contacts').select(sql<number>`count(*)`.as('n'))
        .where('team_id', '=', teamId).where('origin', '<>', 'sends').executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    values: (teamId, contactId) => db.selectFrom('contact_property_values as v')
      .innerJoin('contact_properties as p', (j) => j.onRef('p.team_id', '=', 'v.team_id').onRef('p.key', '=', 'v.key'))
      .select(['v.key', 'p.type', 'v.text_value', 'v.num_value'])
      .where('v.contact_id', '=', contactId).where('v.team_id', '=', teamId)
      .orderBy('v.key').execute(),
    async setValue(row) {
      await db.insertInto('contact_property_values').values(row)
        .onConflict((oc) => oc.columns(['contact_id', 'key']).doUpdateSet({ text_value: row.text_value, num_value: row.num_value }))
        .execute();
    },
    async deleteValue(contactId, key) {
      await db.deleteFrom('contact_property_values').where('contact_id', '=', contactId).where('key', '=', key).execute();
    },
    choices: (contactId) => db.selectFrom('contact_topics').selectAll().where('contact_id', '=', contactId).execute(),
    async setChoice(row) {
      await db.insertInto('contact_topics').values(row)
        .onConflict((oc) => oc.columns(['contact_id', 'topic_id']).doUpdateSet({ subscription: row.subscription, updated_at: row.updated_at }))
        .execute();
    },
    async erase(teamId, id) {
      await db.deleteFrom('contact_property_values').where('contact_id', '=', id).execute();
      await db.deleteFrom('contact_topics').where('contact_id', '=', id).execute();
      await db.deleteFrom('segment_members').where('contact_id', '=', id).execute();
      const r = await db.deleteFrom('contacts').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
  };
}

/**
 * Whether the team has a contact with the address: the delivery path's first, cheap question
 * (most recipients of a team's mail are contacts already), compiled once.
 */
export async function contactExists(conn: Kysely<any>, teamId: string, emailKey: string): Promise<boolean> {
  const statement = shapedStatement(conn, 'contacts.exists', (m) => conn.selectFrom('contacts').select(sql<number>`1`.as('one'))
    .where('team_id', '=', m('team_id')).where('email_key', '=', m('email_key')).limit(sql.lit(1)));
  return (await statement(conn, { team_id: teamId, email_key: emailKey })).rows.length > 0;
}

export interface ContactFromSend {
  id: string;
  team_id: string;
  email: string;
  email_key: string;
  /** HMAC of email_key (consent_records.email_hash): an erased address is never added back. */
  email_hash: string;
  at: string;
}

/**
 * Rule 4, on the delivery path: one statement per delivered recipient, compiled once. Inserts a
 * never_subscribed contact (origin `sends`) unless the team switched audience_from_sends off, the
 * address is suppressed (bounced, complained, unsubscribed, manual) or was erased, or the team
 * already has a contact with it (which is never changed). Answers whether it inserted.
 */
export async function addContactFromSend(conn: Kysely<any>, row: ContactFromSend): Promise<boolean> {
  // Each value cast as text: PostgreSQL cannot type a bare parameter in a select list.
  const statement = shapedStatement(conn, 'contacts.fromSend', (m) => {
    const text = (name: string) => sql<string>`cast(${m(name)} as text)`;
    return conn.insertInto('contacts')
      .columns(['id', 'team_id', 'email', 'email_key', 'first_name', 'last_name', 'subscription_status', 'origin', 'created_at', 'updated_at'])
      .expression(conn.selectFrom('teams')
        .select([
          text('id').as('id'), 'teams.id as team_id', text('email').as('email'), text('email_key').as('email_key'),
          sql<null>`null`.as('first_name'), sql<null>`null`.as('last_name'),
          sql<string>`'never_subscribed'`.as('subscription_status'), sql<string>`'sends'`.as('origin'),
          text('at').as('created_at'), text('at').as('updated_at'),
        ])
        .where('teams.id', '=', m('team_id'))
        .where(audienceFromSendsOn)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('suppressions as s').select(sql<number>`1`.as('one'))
          .where('s.team_id', '=', m('team_id')).where('s.email_key', '=', m('email_key')))))
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('consent_records as r').select(sql<number>`1`.as('one'))
          .where('r.team_id', '=', m('team_id')).where('r.email_hash', '=', m('email_hash')).where('r.contact_id', 'is', null)
          .where(sql<boolean>`r.kind = 'erasure'`)))))
      .onConflict((oc) => oc.columns(['team_id', 'email_key']).doNothing());
  });
  const result = await statement(conn, { id: row.id, team_id: row.team_id, email: row.email, email_key: row.email_key, email_hash: row.email_hash, at: row.at });
  return (result.numAffectedRows ?? 0n) > 0n;
}

/**
 * The team's audience_from_sends switch as a condition on `teams` (one small place to read it:
 * the team settings route writes the column).
 */
const audienceFromSendsOn = sql<boolean>`teams.audience_from_sends <> 0`;
