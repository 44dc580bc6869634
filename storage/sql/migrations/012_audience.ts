import { sql, type Kysely } from 'kysely';

// The audience: contacts, their typed properties, topics and each contact's topic choices, the
// consent trail, the platform-event stream automations will read, and the team's
// audience_from_sends switch.
//
// Property values live in a table of their own, one row per (contact, key), rather than in a
// JSON column on contacts. A segment condition on a property is then an index range on
// (team_id, key, text_value) or (team_id, key, num_value) joined to contacts by primary key: one
// plain SQL query, the same on SQLite and PostgreSQL, whatever keys a team declares. A JSON
// column would need either a scan of every contact of the team (json_extract per row: a million
// rows is seconds) or an expression index per declared key (DDL at run time, per team, and
// different on each engine). Numbers and booleans (0/1) go in num_value, strings in text_value,
// so range conditions compare numbers as numbers.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('teams')
    .addColumn('audience_from_sends', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();

  // subscription_status is the one truth; `unsubscribed` on the wire is status = 'unsubscribed'.
  // origin `sends`: added when mail was delivered to it (rule 4), not counted toward the limit.
  await db.schema.createTable('contacts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('subscription_status', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('contacts_team_email').on('contacts').columns(['team_id', 'email_key']).unique().execute();
  await db.schema.createIndex('contacts_team').on('contacts').columns(['team_id', 'id']).execute();
  await db.schema.createIndex('contacts_team_origin').on('contacts').columns(['team_id', 'origin']).execute();

  // key_fold: keys differing only in case would be one merge variable ({{{PLAN}}}).
  await db.schema.createTable('contact_properties')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('key_fold', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('fallback_value', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('contact_properties_team_key').on('contact_properties').columns(['team_id', 'key_fold']).unique().execute();
  await db.schema.createIndex('contact_properties_team').on('contact_properties').columns(['team_id', 'id']).execute();

  await db.schema.createTable('contact_property_values')
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('text_value', 'text')
    .addColumn('num_value', 'double precision')
    .addPrimaryKeyConstraint('contact_property_values_pk', ['contact_id', 'key'])
    .execute();
  await db.schema.createIndex('contact_property_values_text').on('contact_property_values').columns(['team_id', 'key', 'text_value']).execute();
  await db.schema.createIndex('contact_property_values_num').on('contact_property_values').columns(['team_id', 'key', 'num_value']).execute();

  // Deleted topics stay (deleted_at) so their choices and consent records keep their meaning; the
  // name is unique among live ones only.
  await db.schema.createTable('topics')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('default_subscription', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('topics_team_live_name').on('topics').columns(['team_id', 'name_key']).unique()
    .where(sql.ref('deleted_at'), 'is', null).execute();
  await db.schema.createIndex('topics_team').on('topics').columns(['team_id', 'id']).execute();

  await db.schema.createTable('contact_topics')
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('topic_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('subscription', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_topics_pk', ['contact_id', 'topic_id'])
    .execute();
  // A broadcast to a topic reads the explicit choices of that topic.
  await db.schema.createIndex('contact_topics_topic').on('contact_topics').columns(['team_id', 'topic_id', 'subscription']).execute();

  // Never the address itself: email_hash is HMAC-SHA256 of the lower-cased address under a key
  // derived from secret.key, so an opt-out stays provable after erasure (contact_id is then null)
  // without the trail being reversible by a dictionary of addresses.
  await db.schema.createTable('consent_records')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text')
    .addColumn('email_hash', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('topic_id', 'text')
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('consent_records_contact').on('consent_records').columns(['contact_id']).execute();
  await db.schema.createIndex('consent_records_hash').on('consent_records').columns(['team_id', 'email_hash', 'kind']).execute();
  await db.schema.createIndex('consent_records_created').on('consent_records').column('created_at').execute();

  // The internal stream automations will read (svc:contact.created, svc:topic.*); nothing reads it yet.
  await db.schema.createTable('platform_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['platform_events', 'consent_records', 'contact_topics', 'topics', 'contact_property_values', 'contact_properties', 'contacts']) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable('teams').dropColumn('audience_from_sends').execute();
}
