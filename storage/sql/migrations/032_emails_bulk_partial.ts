import { sql, type Kysely } from 'kysely';

// The bulk rule (core/emails/bulk.ts) counts only emails without an unsubscribe link
// (repos/emails.ts bulkRecipients: has_unsubscribe = 0), yet emails_bulk held every email. Its
// key leads with a digest, so each email's entry lands at a random place in the index: a
// broadcast's page of 500 emails (each personalised, each with its own digest, each with an
// unsubscribe link) dirtied hundreds of index pages for entries no query reads. The index now
// holds only the emails the rule counts; the query names the same condition as a literal, so
// SQLite's planner (which matches a partial index's WHERE against the query's text) uses it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('emails_bulk_counted').on('emails').columns(['team_id', 'content_hash', 'created_at'])
    .where(sql<boolean>`has_unsubscribe = 0`).execute();
  await db.schema.dropIndex('emails_bulk').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('emails_bulk').on('emails').columns(['team_id', 'content_hash', 'created_at']).execute();
  await db.schema.dropIndex('emails_bulk_counted').execute();
}
