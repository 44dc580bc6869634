import { sql, type Kysely } from 'kysely';

// Segments: a name and a filter (JSON, fixed at creation) per segment, and the contacts added by
// hand. Membership by filter is never stored: it is one query over contacts, their property
// values and topic choices when read (storage/repos/segment-filter.ts compiles the filter), so a
// contact that starts matching is in at once and one that stops is out. Deleted segments stay
// (deleted_at) with their name free again, as topics do.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('segments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('filter', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('segments_team_live_name').on('segments').columns(['team_id', 'name_key']).unique()
    .where(sql.ref('deleted_at'), 'is', null).execute();
  await db.schema.createIndex('segments_team').on('segments').columns(['team_id', 'id']).execute();

  // Explicit members: the primary key answers "is this contact in by hand" and walks a segment's
  // members in contact order; the contact index serves a contact's segments and its erasure.
  await db.schema.createTable('segment_members')
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('segment_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('segment_members_pk', ['segment_id', 'contact_id'])
    .execute();
  await db.schema.createIndex('segment_members_contact').on('segment_members').columns(['contact_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('segment_members').execute();
  await db.schema.dropTable('segments').execute();
}
