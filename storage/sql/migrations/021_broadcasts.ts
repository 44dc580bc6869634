import { sql, type Kysely } from 'kysely';

// Broadcasts (spec Broadcast): one message to a segment, fanned out by the durable worker into one
// ordinary email per recipient. `broadcast_recipients` holds one row per segment member the
// fan-out reached: sent (with its email) or excluded with its reason; its primary key makes a
// member's second row impossible, so a fan-out step replayed after a crash cannot double anyone.
// `emails.broadcast_id` ties each email (and through envelopeData every email.* event) to it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('broadcasts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('segment_id', 'text')
    .addColumn('topic_id', 'text')
    .addColumn('template_id', 'text')
    .addColumn('from_header', 'text')
    .addColumn('subject', 'text')
    .addColumn('reply_to_json', 'text')
    .addColumn('preview_text', 'text')
    .addColumn('html', 'text')
    .addColumn('text', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('scheduled_at', 'text')
    .addColumn('sent_at', 'text')
    .addColumn('recipients_sent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('recipients_excluded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('broadcasts_team').on('broadcasts').columns(['team_id', 'id']).execute();
  // The release job's read: scheduled broadcasts by due time.
  await db.schema.createIndex('broadcasts_status_due').on('broadcasts').columns(['status', 'scheduled_at']).execute();

  await db.schema.createTable('broadcast_recipients')
    .addColumn('broadcast_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('email_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('broadcast_recipients_pk', ['broadcast_id', 'contact_id'])
    .execute();
  await db.schema.createIndex('broadcast_recipients_status').on('broadcast_recipients').columns(['broadcast_id', 'status', 'contact_id']).execute();

  await db.schema.alterTable('emails').addColumn('broadcast_id', 'text').execute();
  await db.schema.createIndex('emails_broadcast').on('emails').columns(['broadcast_id', 'id'])
    .where(sql.ref('broadcast_id'), 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('emails_broadcast').execute();
  await db.schema.alterTable('emails').dropColumn('broadcast_id').execute();
  await db.schema.dropTable('broadcast_recipients').execute();
  await db.schema.dropTable('broadcasts').execute();
}
