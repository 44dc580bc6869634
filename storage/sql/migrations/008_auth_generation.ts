import { sql, SqliteAdapter, type Kysely } from 'kysely';

// auth_generation: one counter that moves, in the same transaction, whenever anything that decides
// authentication changes (a key added, revoked, suspended, re-scoped; a team suspended). The API
// keeps authenticated keys in memory and drops them when the counter moves — whichever process
// or connection made the change. last_used_at updates do not move it.
const keyColumns = 'status, permission, domain_id, token_hash, team_id, public_id';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('auth_generation')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('value', 'integer', (c) => c.notNull())
    .execute();
  await db.insertInto('auth_generation').values({ id: 1, value: 0 }).execute();
  const bump = 'update auth_generation set value = value + 1 where id = 1';
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    for (const [name, event] of [
      ['api_keys_insert', 'insert on api_keys'], ['api_keys_delete', 'delete on api_keys'], ['api_keys_update', `update of ${keyColumns} on api_keys`],
      ['teams_delete', 'delete on teams'], ['teams_update', 'update of status on teams'],
    ] as const) {
      await sql.raw(`create trigger auth_generation_${name} after ${event} begin ${bump}; end`).execute(db);
    }
    return;
  }
  await sql.raw(`create function svc_bump_auth_generation() returns trigger language plpgsql as $$ begin ${bump}; return null; end $$`).execute(db);
  // Per row, as SQLite's triggers are: an update that matches no row moves nothing.
  await sql.raw(`create trigger auth_generation_api_keys after insert or delete or update of ${keyColumns} on api_keys for each row execute function svc_bump_auth_generation()`).execute(db);
  await sql.raw('create trigger auth_generation_teams after delete or update of status on teams for each row execute function svc_bump_auth_generation()').execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql.raw('drop trigger auth_generation_api_keys on api_keys').execute(db);
    await sql.raw('drop trigger auth_generation_teams on teams').execute(db);
    await sql.raw('drop function svc_bump_auth_generation()').execute(db);
  }
  await db.schema.dropTable('auth_generation').execute();
}
