import { type Kysely } from 'kysely';

// Engagement of each recipient, written where it happens so lists read it without touching the
// event outbox:
// - email_recipients: opens and clicks (machine ones among them), the first of each and the first
//   no machine made — written by core/tracking in its group-committed batches of hits — and when
//   a complaint about the message came in (core/emails' complaint recorder).
// - broadcast_recipient_marks: rare facts about a broadcast's recipient, keyed by broadcast, kind
//   and contact so their lists walk only the marked: `complained` (the complaint recorder, for a
//   broadcast's email) and `unsubscribed` (through that broadcast's unsubscribe or preference link:
//   core/preferences; the link's token names the broadcast). A table of its own rather than
//   columns of broadcast_recipients, which a later migration makes, and which a rare-fact list
//   would have to scan whole on a large broadcast.
// - broadcast_links: clicks per link of a broadcast, summed as clicks come in, so
//   GET /broadcasts/{id}/clicked-links reads one row per link however many recipients there are;
//   `link_key` is a hash of the URL (URLs run to 2 KiB), `id` a time-ordered cursor.
// - broadcast_link_clicks: one row per link and recipient email: what makes `unique_clicks`
//   exact (a new row is a new clicker) and gives each clicker's links.
const engagementColumns = ['opens', 'machine_opens', 'clicks', 'machine_clicks'];
const engagementTimes = ['first_opened_at', 'first_human_opened_at', 'first_clicked_at', 'first_human_clicked_at', 'complained_at'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of engagementColumns) {
    await db.schema.alterTable('email_recipients').addColumn(column, 'integer', (c) => c.notNull().defaultTo(0)).execute();
  }
  for (const column of engagementTimes) await db.schema.alterTable('email_recipients').addColumn(column, 'text').execute();

  await db.schema.createTable('broadcast_recipient_marks')
    .addColumn('broadcast_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('broadcast_recipient_marks_pk', ['broadcast_id', 'kind', 'contact_id'])
    .execute();

  await db.schema.createTable('broadcast_links')
    .addColumn('broadcast_id', 'text', (c) => c.notNull())
    .addColumn('link_key', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('machine_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unique_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unique_human_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('broadcast_links_pk', ['broadcast_id', 'link_key'])
    .execute();
  await db.schema.createIndex('broadcast_links_page').on('broadcast_links').columns(['broadcast_id', 'id']).execute();

  await db.schema.createTable('broadcast_link_clicks')
    .addColumn('broadcast_id', 'text', (c) => c.notNull())
    .addColumn('email_id', 'text', (c) => c.notNull())
    .addColumn('link_key', 'text', (c) => c.notNull())
    .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('machine_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('broadcast_link_clicks_pk', ['broadcast_id', 'email_id', 'link_key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('broadcast_link_clicks').execute();
  await db.schema.dropTable('broadcast_links').execute();
  await db.schema.dropTable('broadcast_recipient_marks').execute();
  for (const column of [...engagementTimes, ...engagementColumns]) await db.schema.alterTable('email_recipients').dropColumn(column).execute();
}
