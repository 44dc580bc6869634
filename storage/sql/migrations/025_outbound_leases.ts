import { type Kysely } from 'kysely';

// Several outbound processes (on one box or on several, sharing the database and Redis) serve one
// region's queue. A recipient a process claims carries its lease: `lease_owner` (the process's
// node id) and `lease_until` (renewed while the process holds it). Another process claims only a
// row whose lease is absent or lapsed, and every change an attempt makes is conditional on the
// owner, so a process that lost its lease changes nothing. A `submitting` row whose lease lapsed
// was left by a process that died: it becomes ambiguous (never resent), whichever process sees it.
// No index: claims go through email_recipients_queue, recovery through email_recipients_state.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('email_recipients').addColumn('lease_owner', 'text').execute();
  await db.schema.alterTable('email_recipients').addColumn('lease_until', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('email_recipients').dropColumn('lease_until').execute();
  await db.schema.alterTable('email_recipients').dropColumn('lease_owner').execute();
}
