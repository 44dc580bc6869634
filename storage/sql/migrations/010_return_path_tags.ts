import { type Kysely } from 'kysely';

// Signed return paths. `appliance_facts` keeps when tags began, so return paths minted before the
// upgrade (no tag) are honoured for the mail sent before it, and only within its retry window.
// `rejected_addresses` is the evidence behind the appliance-wide dead_address refusal: one row per
// address and team, written only when svc's own delivery attempt met a permanent "no such mailbox"
// reply from the remote server — never from a report, which anyone can write. Nothing is carried
// over from earlier bounces: they cannot be told apart from forged reports.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('appliance_facts')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db.insertInto('appliance_facts').values({ name: 'return_path_tags_since', value: new Date().toISOString() }).execute();
  await db.schema.createTable('rejected_addresses')
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('rejected_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('rejected_addresses_pk', ['address', 'team_id'])
    .execute();
  await db.schema.createIndex('rejected_addresses_rejected_at').on('rejected_addresses').column('rejected_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rejected_addresses').execute();
  await db.schema.dropTable('appliance_facts').execute();
}
