import { sql, type Kysely } from 'kysely';

// Retention: dropped received records age out, kept ones never do. A partial index holds only the
// dropped records, so the pruning job finds the old ones without walking every kept message
// (which grow without bound by design) and costs nothing on kept inserts' hot path but a check.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('received_emails_dropped_created').on('received_emails').column('created_at')
    .where(sql.ref('dropped_reason'), 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('received_emails_dropped_created').execute();
}
