import { sql, type Kysely } from 'kysely';
import { int64Type } from '../dialect.js';

// Received mail: one row per message and team (one SMTP transaction for two teams makes two
// records), its attachments' metadata (the bytes stay in the raw source on disk and are re-read
// on download), per-team usage for the mailbox quota, and the DSNs and complaint reports that
// came back for mail svc sent.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('received_emails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('domain_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('from_text', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('from_name', 'text', (c) => c.notNull())
    .addColumn('to_json', 'text', (c) => c.notNull())
    .addColumn('cc_json', 'text')
    .addColumn('bcc_json', 'text')
    .addColumn('reply_to_json', 'text')
    .addColumn('received_for_json', 'text', (c) => c.notNull())
    .addColumn('search_text', 'text', (c) => c.notNull())
    .addColumn('headers_json', 'text')
    .addColumn('html', 'text')
    .addColumn('text', 'text')
    .addColumn('dropped_reason', 'text')
    .addColumn('raw_key', 'text')
    .addColumn('raw_size', 'integer', (c) => c.notNull())
    .addColumn('envelope_from', 'text', (c) => c.notNull())
    .addColumn('client_ip', 'text', (c) => c.notNull())
    .addColumn('client_helo', 'text', (c) => c.notNull())
    .addColumn('scan_status', 'text', (c) => c.notNull())
    .addColumn('scan_signature', 'text')
    .addColumn('auth_json', 'text')
    .execute();
  await db.schema.createIndex('received_emails_team').on('received_emails').columns(['team_id', 'id']).execute();
  await db.schema.createIndex('received_emails_team_created').on('received_emails').columns(['team_id', 'created_at']).execute();

  await db.schema
    .createTable('received_attachments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email_id', 'text', (c) => c.notNull().references('received_emails.id').onDelete('cascade'))
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('filename', 'text')
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('content_id', 'text')
    .addColumn('content_disposition', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('checksum', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('received_attachments_email').on('received_attachments').columns(['email_id', 'position']).execute();

  await db.schema
    .createTable('received_usage')
    .addColumn('team_id', 'text', (c) => c.primaryKey())
    .addColumn('kept_bytes', int64Type(db), (c) => c.notNull().defaultTo(sql`0`))
    .addColumn('kept_count', int64Type(db), (c) => c.notNull().defaultTo(sql`0`))
    .execute();

  await db.schema
    .createTable('received_reports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text')
    .addColumn('email_id', 'text')
    .addColumn('recipient', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('detail_json', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('received_reports_email').on('received_reports').columns(['email_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('received_reports').execute();
  await db.schema.dropTable('received_usage').execute();
  await db.schema.dropTable('received_attachments').execute();
  await db.schema.dropTable('received_emails').execute();
}
