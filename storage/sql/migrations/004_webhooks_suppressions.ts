import type { Kysely } from 'kysely';
import { int64Type } from '../dialect.js';

// The suppression list, webhook endpoints, their deliveries (one per event and endpoint, the unit
// the retry schedule works on) and every attempt, plus the dispatcher's position in the outbox.
export async function up(db: Kysely<any>): Promise<void> {
  // Outbox positions are 64-bit like events.seq.
  const seqType = int64Type(db);
  await db.schema
    .createTable('suppressions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('suppressions_team_email').on('suppressions').columns(['team_id', 'email_key']).unique().execute();
  await db.schema.createIndex('suppressions_team').on('suppressions').columns(['team_id', 'id']).execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('from_seq', seqType, (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_team').on('webhook_endpoints').columns(['team_id', 'id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_seq', seqType, (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts_made', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('replay', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // One message per (endpoint, event): a repeated fan-out inserts nothing new.
  await db.schema.createIndex('webhook_deliveries_endpoint_event').on('webhook_deliveries').columns(['endpoint_id', 'event_id']).unique().execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();
  // Claims work endpoint by endpoint: each finds its due messages (or lapsed claims) by index range.
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['endpoint_id', 'status', 'next_attempt_at', 'id']).execute();
  // Retention removes finished messages by age.
  await db.schema.createIndex('webhook_deliveries_finished').on('webhook_deliveries').columns(['status', 'updated_at']).execute();
  await db.schema.createIndex('webhook_deliveries_lease').on('webhook_deliveries').columns(['endpoint_id', 'status', 'lease_until']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('attempted_at', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_endpoint').on('webhook_attempts').columns(['endpoint_id', 'id']).execute();
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').columns(['delivery_id', 'id']).execute();

  await db.schema
    .createTable('outbox_cursors')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('seq', seqType, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['outbox_cursors', 'webhook_attempts', 'webhook_deliveries', 'webhook_endpoints', 'suppressions']) {
    await db.schema.dropTable(table).execute();
  }
}
