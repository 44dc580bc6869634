import { sql, type Kysely } from 'kysely';

// The consent trail is read by address hash only once its contact is erased (contact_id null):
// an erased address is never added back from sends, and its opt-out stays provable. While the
// contact lives its records are read by contact_id. The hash is an HMAC, so its index takes each
// new record on a random page: at 1M contacts an import's consent insert cost ~63 µs a row with
// that index against ~11.5 µs without it. Partial, the index holds only the erased trail, and an
// import or a live contact's choice never touches it; erasure adds the contact's few records.
// The same on SQLite and PostgreSQL (both use a partial index when the query names its condition).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('consent_records_hash').execute();
  await db.schema.createIndex('consent_records_erased_hash').on('consent_records')
    .columns(['team_id', 'email_hash', 'kind']).where(sql.ref('contact_id'), 'is', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('consent_records_erased_hash').execute();
  await db.schema.createIndex('consent_records_hash').on('consent_records').columns(['team_id', 'email_hash', 'kind']).execute();
}
