import { sql, type Kysely } from 'kysely';

// Sending domains, their DKIM keys (several during a rotation) and claims of names held by another
// team. A partial unique index makes "one team holds a name verified" a database fact.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('domains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('sending', 'text', (c) => c.notNull())
    .addColumn('receiving', 'text', (c) => c.notNull())
    .addColumn('open_tracking', 'integer', (c) => c.notNull())
    .addColumn('click_tracking', 'integer', (c) => c.notNull())
    .addColumn('tls', 'text', (c) => c.notNull())
    .addColumn('custom_return_path', 'text', (c) => c.notNull())
    .addColumn('tracking_subdomain', 'text', (c) => c.notNull())
    .addColumn('receiving_host', 'text', (c) => c.notNull())
    .addColumn('receiving_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('record_states', 'text', (c) => c.notNull())
    .addColumn('sending_ready', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('owner_verified_at', 'text')
    .addColumn('released_at', 'text')
    .addColumn('last_checked_at', 'text')
    .addColumn('provider_token', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('domains_team').on('domains').columns(['team_id', 'id']).execute();
  await db.schema.createIndex('domains_name').on('domains').column('name').execute();
  await db.schema.createIndex('domains_receiving_name').on('domains').column('receiving_name').execute();
  await db.schema.createIndex('domains_one_owner').on('domains').column('name').unique()
    .where(sql.ref('owner_verified_at'), 'is not', null).where(sql.ref('released_at'), 'is', null).execute();

  await db.schema
    .createTable('domain_dkim_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('domain_id', 'text', (c) => c.notNull().references('domains.id').onDelete('cascade'))
    .addColumn('selector', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key_sealed', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('activated_at', 'text')
    .addColumn('retire_at', 'text')
    .execute();
  await db.schema.createIndex('domain_dkim_keys_domain').on('domain_dkim_keys').columns(['domain_id', 'id']).execute();

  await db.schema
    .createTable('domain_claims')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('custom_return_path', 'text', (c) => c.notNull())
    .addColumn('open_tracking', 'integer', (c) => c.notNull())
    .addColumn('click_tracking', 'integer', (c) => c.notNull())
    .addColumn('tracking_subdomain', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('failure_reason', 'text')
    .addColumn('previous_domain_id', 'text')
    .addColumn('domain_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .addColumn('last_checked_at', 'text')
    .execute();
  await db.schema.createIndex('domain_claims_team').on('domain_claims').columns(['team_id', 'id']).execute();
  await db.schema.createIndex('domain_claims_status').on('domain_claims').columns(['status', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('domain_claims').execute();
  await db.schema.dropTable('domain_dkim_keys').execute();
  await db.schema.dropTable('domains').execute();
}
