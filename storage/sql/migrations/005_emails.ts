import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

// Sending: the email as accepted (what it said, frozen), one row per recipient carrying the
// delivery state (the outbound queue is these rows), tags for filtering, attachments as sent,
// share links (hash only), the answered responses of idempotent requests, and the bulk-rule
// warnings. Timestamps are ISO 8601 UTC text.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('emails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('domain_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('from_header', 'text', (c) => c.notNull())
    .addColumn('from_email', 'text', (c) => c.notNull())
    .addColumn('to_json', 'text', (c) => c.notNull())
    .addColumn('cc_json', 'text')
    .addColumn('bcc_json', 'text')
    .addColumn('reply_to_json', 'text')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('html', 'text')
    .addColumn('text', 'text')
    .addColumn('headers_json', 'text')
    .addColumn('tags_json', 'text')
    .addColumn('topic_id', 'text')
    .addColumn('template_id', 'text')
    .addColumn('template_version', 'text')
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('scheduled_at', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_event', 'text', (c) => c.notNull())
    .addColumn('recipients_text', 'text', (c) => c.notNull())
    .addColumn('recipient_count', 'integer', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('has_unsubscribe', 'integer', (c) => c.notNull())
    .addColumn('attachment_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('emails_team').on('emails').columns(['team_id', 'id']).execute();
  await db.schema.createIndex('emails_bulk').on('emails').columns(['team_id', 'content_hash', 'created_at']).execute();
  await db.schema.createIndex('emails_scheduled').on('emails').columns(['status', 'scheduled_at']).execute();
  await db.schema.createIndex('emails_message_id').on('emails').column('message_id').execute();

  await db.schema
    .createTable('email_recipients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email_id', 'text', (c) => c.notNull().references('emails.id'))
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('first_attempt_at', 'text')
    .addColumn('submitted_at', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('last_response', 'text')
    .addColumn('bounce_type', 'text')
    .addColumn('bounce_sub_type', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_recipients_queue').on('email_recipients').columns(['region', 'state', 'next_attempt_at']).execute();
  await db.schema.createIndex('email_recipients_email').on('email_recipients').columns(['email_id', 'idx']).execute();
  await db.schema.createIndex('email_recipients_address').on('email_recipients').columns(['address', 'state']).execute();
  await db.schema.createIndex('email_recipients_state').on('email_recipients').columns(['state', 'submitted_at']).execute();

  await db.schema
    .createTable('email_tags')
    .addColumn('email_id', 'text', (c) => c.notNull().references('emails.id'))
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('email_tags_pk', ['email_id', 'name'])
    .execute();
  await db.schema.createIndex('email_tags_filter').on('email_tags').columns(['team_id', 'name', 'value', 'email_id']).execute();

  await db.schema
    .createTable('email_attachments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email_id', 'text', (c) => c.notNull().references('emails.id'))
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('filename', 'text')
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('content_id', 'text')
    .addColumn('disposition', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('content', isPostgres(db) ? 'bytea' : 'blob', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_attachments_email').on('email_attachments').columns(['email_id', 'idx']).execute();

  await db.schema
    .createTable('email_share_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email_id', 'text', (c) => c.notNull().references('emails.id'))
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['team_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();

  await db.schema
    .createTable('bulk_warnings')
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('warned_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bulk_warnings_pk', ['team_id', 'content_hash', 'day'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['bulk_warnings', 'idempotency_keys', 'email_share_links', 'email_attachments', 'email_tags', 'email_recipients', 'emails']) {
    await db.schema.dropTable(table).execute();
  }
}
