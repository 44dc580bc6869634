import { sql, type Kysely } from 'kysely';

// The durable worker's claim (repos/work.ts) asks for the earliest due items among the claimable
// states. On work_items_due (state, due_at) that is two ranges to merge, which SQLite does by
// reading every claimable row and sorting them: with 100,000 automation runs parked on a delay,
// each claim of a few items read all of them (60 ms a claim). An index on due_at holding only the
// claimable rows is read in order and stops at the limit; finished rows (most of the table over
// time) are not in it. The claim was work_items_due's only reader.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('work_items_claimable').on('work_items').column('due_at')
    .where(sql<boolean>`state in ('queued', 'running')`).execute();
  await db.schema.dropIndex('work_items_due').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('work_items_due').on('work_items').columns(['state', 'due_at']).execute();
  await db.schema.dropIndex('work_items_claimable').execute();
}
