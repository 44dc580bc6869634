import { type Kysely } from 'kysely';

// Contact imports (spec document 2, Contact import): one row per uploaded CSV with its options and
// counts, and the first thousand failed rows of each. The file itself lives under the data folder
// (storage/files/import-files.ts) until seven days after the import finished; the row and its
// counts stay. `created_by` is the API key that uploaded it: with the row's options and times it
// is the import's audit entry.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('contact_imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('on_conflict', 'text', (c) => c.notNull())
    .addColumn('column_map', 'text', (c) => c.notNull())
    .addColumn('segments', 'text', (c) => c.notNull())
    .addColumn('topics', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text')
    .addColumn('file_bytes', 'integer', (c) => c.notNull())
    .addColumn('data_offset', 'integer', (c) => c.notNull())
    .addColumn('file_deleted_at', 'text')
    .addColumn('created_by', 'text')
    .addColumn('source_ip', 'text')
    .addColumn('source_user_agent', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('contact_imports_team').on('contact_imports').columns(['team_id', 'id']).execute();
  await db.schema.createIndex('contact_imports_team_status').on('contact_imports').columns(['team_id', 'status', 'id']).execute();
  // The retention step looks for finished imports whose file is still on disk.
  await db.schema.createIndex('contact_imports_file').on('contact_imports').columns(['file_deleted_at', 'completed_at']).execute();

  await db.schema.createTable('contact_import_failures')
    .addColumn('import_id', 'text', (c) => c.notNull())
    .addColumn('row_number', 'integer', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_import_failures_pk', ['import_id', 'row_number'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('contact_import_failures').execute();
  await db.schema.dropTable('contact_imports').execute();
}
