import { sql, SqliteAdapter, type CreateTableBuilder, type Kysely } from 'kysely';

// Metrics are served from rollups of the event outbox, never from the events:
//  - metrics_minutes: per (team, minute, domain, broadcast).
//  - metrics_quarters: the same per quarter hour. Every IANA offset in use is a multiple of 15
//    minutes, so every hour, day, week and month boundary of any zone falls on a quarter: a month
//    query reads its whole quarters here (96 a day per domain) and only its ragged ends (under 15
//    minutes each) from metrics_minutes.
//  - metrics_email_minutes: per email and minute — read only for the `email` dimension or an
//    `email_id` filter (by primary key).
//  - metrics_email_marks: "this email was already counted" markers, which make `attempted`,
//    `unique_opened` and `unique_clicked` count each email once (at its first such event).
//  - metrics_domains: the name of each domain seen, so a deleted domain keeps its name.
// Absent domain or broadcast is '' (not NULL) so the composite keys can be upserted. On SQLite the
// rollups are WITHOUT ROWID tables: rows sit in primary-key order, so a team's time range is one
// sequential read instead of an index walk plus a row lookup each.
// The rollup's position in the outbox is a row of outbox_cursors ('metrics-rollup').

const metricCountColumns = [
  'received', 'sent', 'delivered', 'delivery_delayed', 'bounced', 'bounced_permanent', 'bounced_transient',
  'bounced_undetermined', 'complained', 'opened', 'clicked', 'unique_opened', 'unique_clicked', 'failed',
  'suppressed', 'attempted', 'unsubscribed',
] as const;

function withCounters<T extends string>(table: CreateTableBuilder<T, any>): CreateTableBuilder<T, any> {
  let builder = table;
  for (const column of metricCountColumns) builder = builder.addColumn(column, 'integer', (c) => c.notNull().defaultTo(0));
  return builder;
}

export async function up(db: Kysely<any>): Promise<void> {
  const clustered = db.getExecutor().adapter instanceof SqliteAdapter;
  const finish = <T extends string>(table: CreateTableBuilder<T, any>) => (clustered ? table.modifyEnd(sql`without rowid`) : table);

  for (const name of ['metrics_minutes', 'metrics_quarters']) {
    const table = withCounters(db.schema.createTable(name)
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('minute', 'integer', (c) => c.notNull())
      .addColumn('domain_id', 'text', (c) => c.notNull())
      .addColumn('broadcast_id', 'text', (c) => c.notNull()));
    await finish(table.addPrimaryKeyConstraint(`${name}_pk`, ['team_id', 'minute', 'domain_id', 'broadcast_id'])).execute();
  }

  const perEmail = withCounters(db.schema.createTable('metrics_email_minutes')
    .addColumn('email_id', 'text', (c) => c.notNull())
    .addColumn('minute', 'integer', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('domain_id', 'text', (c) => c.notNull())
    .addColumn('broadcast_id', 'text', (c) => c.notNull()));
  await finish(perEmail.addPrimaryKeyConstraint('metrics_email_minutes_pk', ['email_id', 'minute'])).execute();
  await db.schema.createIndex('metrics_email_minutes_team').on('metrics_email_minutes').columns(['team_id', 'minute']).execute();

  await finish(db.schema
    .createTable('metrics_email_marks')
    .addColumn('email_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('minute', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('metrics_email_marks_pk', ['email_id', 'kind'])).execute();

  await db.schema
    .createTable('metrics_domains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['metrics_domains', 'metrics_email_marks', 'metrics_email_minutes', 'metrics_quarters', 'metrics_minutes']) {
    await db.schema.dropTable(table).execute();
  }
}
