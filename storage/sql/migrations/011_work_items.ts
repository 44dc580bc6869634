import { type Kysely } from 'kysely';

// The durable worker's items: one row per piece of long-running work (a contact import, a
// broadcast's fan-out, an automation run). `cursor` is the work's position, moved in the same
// transaction as the writes of each step, so a crash resumes where the last commit left it and
// nothing is done twice. `lease_owner`/`lease_until` give it one owner at a time across processes;
// a lease that lapses (its owner died) is taken again. `(kind, key)` makes enqueueing idempotent.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('work_items')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('steps', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('cursor', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('work_items_kind_key', ['kind', 'key'])
    .execute();
  await db.schema.createIndex('work_items_due').on('work_items').columns(['state', 'due_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('work_items').execute();
}
