import { type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

// The team's profile and standing, its members, its sending allowance and its brand kit images.
// - teams: `slug` (made once from the name, unique, never changed by a rename), `plan_code` (null:
//   the `default` plan), the sender identity, AI assist, the brand kit (JSON of the fields set;
//   the rest are defaults), `trusted_at` (the operator's review: sending tier 3). `status`
//   (active | suspended) stays the risk state's truth, as authentication reads it.
// - team_members: the people of the team (the admin CLI adds them until a console exists).
// - team_usage: one counter row per team and UTC day (`d:YYYY-MM-DD`) and per month
//   (`m:YYYY-MM`). A send spends from both with a conditional UPDATE in its own transaction, so
//   two processes racing cannot pass a cap (core/team/allowance.ts).
// - brand_kit_uploads: logo images uploaded for the brand kit, served on the public router.
export async function up(db: Kysely<any>): Promise<void> {
  // Nullable, so a row written without them (older code, tests) is still a team: null
  // ai_assist_enabled is off, and a null slug reads as one made from the name.
  for (const [name, type] of [['slug', 'text'], ['plan_code', 'text'], ['sender_name', 'text'], ['postal_address', 'text'], ['ai_assist_enabled', 'integer'], ['brand_kit', 'text'], ['trusted_at', 'text'], ['updated_at', 'text']] as const) {
    await db.schema.alterTable('teams').addColumn(name, type).execute();
  }
  await backfillSlugs(db);
  await db.schema.createIndex('teams_slug').on('teams').column('slug').unique().execute();

  await db.schema.createTable('team_members')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('team_members_email', ['team_id', 'email_key'])
    .execute();

  await db.schema.createTable('team_usage')
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('emails', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('team_usage_pk', ['team_id', 'period'])
    .execute();

  await db.schema.createTable('brand_kit_uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('content', isPostgres(db) ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('brand_kit_uploads_team').on('brand_kit_uploads').columns(['team_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('brand_kit_uploads').execute();
  await db.schema.dropTable('team_usage').execute();
  await db.schema.dropTable('team_members').execute();
  await db.schema.dropIndex('teams_slug').execute();
  for (const name of ['slug', 'plan_code', 'sender_name', 'postal_address', 'ai_assist_enabled', 'brand_kit', 'trusted_at', 'updated_at']) {
    await db.schema.alterTable('teams').dropColumn(name).execute();
  }
}

// A frozen copy of the slug rule (core/team/slug.ts) as it was when this migration was written:
// a migration must do the same thing whatever later code does.
async function backfillSlugs(db: Kysely<any>): Promise<void> {
  const rows = await db.selectFrom('teams').select(['id', 'name']).orderBy('id').execute() as { id: string; name: string }[];
  const taken = new Set<string>();
  for (const row of rows) {
    const base = row.name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48) || 'team';
    let slug = base;
    for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
    taken.add(slug);
    await db.updateTable('teams').set({ slug }).where('id', '=', row.id).execute();
  }
}
