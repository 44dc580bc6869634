import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

// The event outbox: every state change writes its event here in the same transaction, and the
// webhook dispatcher and metrics read from it. `seq` gives consumers a gap-free reading order.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('events')
    // PostgreSQL: a 64-bit identity column. Its values are handed out in insert order, not commit
    // order; events.ts keeps the two the same (see there).
    .addColumn('seq', isPostgres(db) ? 'bigint' : 'integer', (c) => (isPostgres(db) ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement()))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_team_type').on('events').columns(['team_id', 'type', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('events').execute();
}
