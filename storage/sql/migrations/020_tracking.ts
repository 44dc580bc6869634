import { type Kysely } from 'kysely';

// Open and click tracking (core/tracking). Hits themselves are outbox events (email.opened,
// email.clicked); what needs DDL is the metrics' view of machine hits — opens and clicks made by
// privacy proxies and link scanners, flagged in the event — so GET /emails/metrics can leave them out:
// - machine_opened, machine_clicked: the flagged hits among opened and clicked;
// - unique_opened_human, unique_clicked_human: emails at their first open (click) that was not a
//   machine's, counted once per email with their own marks (`opened_human`, `clicked_human`).
// Added to all three rollups, 0 for what was folded before.
const columns = ['machine_opened', 'machine_clicked', 'unique_opened_human', 'unique_clicked_human'];
const tables = ['metrics_minutes', 'metrics_quarters', 'metrics_email_minutes'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of tables) {
    for (const column of columns) {
      await db.schema.alterTable(table).addColumn(column, 'integer', (c) => c.notNull().defaultTo(0)).execute();
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of tables) {
    for (const column of columns) await db.schema.alterTable(table).dropColumn(column).execute();
  }
}
