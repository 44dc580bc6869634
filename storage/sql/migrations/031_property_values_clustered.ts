import { sql, SqliteAdapter, type Kysely } from 'kysely';

// On SQLite, contact_property_values becomes a WITHOUT ROWID table clustered on its primary key
// (contact_id, key). A rowid table kept the primary key as a separate index, so every value row
// was four B-tree writes on import (the rows, that index, _text, _num) and every segment probe by
// (contact_id, key) two reads (the index, then the row for its value); now three writes and one
// read. The _text and _num indexes carry the primary key in place of a rowid, so a count that
// starts from a value range (core/segments) reads contact ids from the index alone. PostgreSQL
// keeps its heap and primary-key index: nothing to change there.
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
  // One transaction: the rebuild happens whole or not at all, whatever stops the process.
  await db.transaction().execute(async (trx) => {
    await trx.schema.createTable('contact_property_values_clustered')
      .addColumn('contact_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('text_value', 'text')
      .addColumn('num_value', 'double precision')
      .addPrimaryKeyConstraint('contact_property_values_pk', ['contact_id', 'key'])
      .modifyEnd(sql`without rowid`)
      .execute();
    await sql`insert into contact_property_values_clustered (contact_id, key, team_id, text_value, num_value)
      select contact_id, key, team_id, text_value, num_value from contact_property_values`.execute(trx);
    await trx.schema.dropTable('contact_property_values').execute();
    await trx.schema.alterTable('contact_property_values_clustered').renameTo('contact_property_values').execute();
    await trx.schema.createIndex('contact_property_values_text').on('contact_property_values').columns(['team_id', 'key', 'text_value']).execute();
    await trx.schema.createIndex('contact_property_values_num').on('contact_property_values').columns(['team_id', 'key', 'num_value']).execute();
  });
}

export async function down(): Promise<void> {
  // The rowid table held the same rows: nothing to undo that a reader could tell.
}
