import type { Kysely } from 'kysely';

// No statement reads email_recipients by address: the suppression list, the rejected addresses
// and the contacts answer every question about an address. Yet each recipient's entry in this
// index lands on a page of its own (addresses are random), and every state change moves it: a
// broadcast page of 500 dirtied about 500 index pages, and each delivery moved its entry twice
// (queued → submitting → delivered). About 8 µs a recipient of the fan-out's main thread.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('email_recipients_address').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('email_recipients_address').on('email_recipients').columns(['address', 'state']).execute();
}
