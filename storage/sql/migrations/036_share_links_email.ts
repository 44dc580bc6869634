import type { Kysely } from 'kysely';

// An email's share links are revoked by email (repos/emails-share.ts revokeLinks) and its rows are
// checked by the foreign key to emails: without an index on email_id both read every share link
// of every team.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('email_share_links_email').on('email_share_links').column('email_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('email_share_links_email').execute();
}
