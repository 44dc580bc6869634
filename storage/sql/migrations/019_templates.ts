import { sql, type Kysely } from 'kysely';

// Templates: the template (name, alias, which version is current and which is published) and its
// versions of content. A version is written once as a draft and edited in place until it is
// published; an edit after that opens the next version, so a sent email's `template_version`
// always names the content it was rendered from. Deleted templates stay (deleted_at) with their
// alias free again. Saved blocks are the team's reusable blocks and sections.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('alias', 'text')
    .addColumn('current_version_id', 'text', (c) => c.notNull())
    .addColumn('published_version_id', 'text')
    .addColumn('published_at', 'text')
    .addColumn('brand_overrides', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('templates_team_live_alias').on('templates').columns(['team_id', 'alias']).unique()
    .where(sql.ref('deleted_at'), 'is', null).execute();
  await db.schema.createIndex('templates_team').on('templates').columns(['team_id', 'id']).execute();

  await db.schema.createTable('template_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('from_header', 'text')
    .addColumn('subject', 'text')
    .addColumn('reply_to_json', 'text')
    .addColumn('preview_text', 'text')
    .addColumn('html', 'text', (c) => c.notNull())
    .addColumn('text', 'text')
    .addColumn('variables_json', 'text', (c) => c.notNull())
    .addColumn('layout_json', 'text')
    .addColumn('starter', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('published_at', 'text')
    .execute();
  await db.schema.createIndex('template_versions_template').on('template_versions').columns(['template_id', 'number']).unique().execute();

  await db.schema.createTable('saved_blocks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('content_json', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('saved_blocks_team').on('saved_blocks').columns(['team_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('saved_blocks').execute();
  await db.schema.dropTable('template_versions').execute();
  await db.schema.dropTable('templates').execute();
}
