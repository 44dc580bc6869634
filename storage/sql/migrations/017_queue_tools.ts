import { type Kysely } from 'kysely';

// The operator's queue tools (svc admin queue …).
// - email_attempts: one row per delivery attempt of a recipient, with the remote reply (or svc's
//   reason) and the host that answered, written by the delivery recorder in the transaction of
//   the outcome. `email_recipients` keeps only the last reply; `svc admin queue show` prints the
//   whole history. Rows live as long as their email.
// - A held recipient is `email_recipients.state = 'held'` (no column: the state is text), which the
//   outbound queue never claims; nothing here needs DDL for it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('email_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email_id', 'text', (c) => c.notNull())
    .addColumn('recipient_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('reply', 'text', (c) => c.notNull())
    .addColumn('relay', 'text')
    .execute();
  await db.schema.createIndex('email_attempts_email').on('email_attempts').columns(['email_id', 'recipient_id', 'at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_attempts').execute();
}
