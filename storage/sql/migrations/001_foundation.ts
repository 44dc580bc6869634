import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

// Timestamps are ISO 8601 UTC text: sortable, and the same on SQLite and PostgreSQL.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('teams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('teams_name').on('teams').column('name').execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public_id', 'text', (c) => c.notNull().unique())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('permission', 'text', (c) => c.notNull())
    .addColumn('domain_id', 'text')
    .addColumn('inbox_access', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('inbox_channel_ids', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_team').on('api_keys').columns(['team_id', 'id']).execute();

  await db.schema
    .createTable('request_logs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('email_id', 'text')
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    .execute();
  await db.schema.createIndex('request_logs_team').on('request_logs').columns(['team_id', 'id']).execute();
  await db.schema.createIndex('request_logs_created').on('request_logs').column('created_at').execute();

  // "Case-insensitive" searches fold with svc_casefold: on SQLite a function db.ts registers on the
  // connection (SQLite's lower() folds ASCII only); on PostgreSQL lower(), which folds by the
  // database's ctype (Unicode in a UTF8 database).
  if (isPostgres(db)) {
    await sql.raw("create function svc_casefold(value text) returns text language sql immutable parallel safe as 'select lower(value)'").execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql.raw('drop function svc_casefold(text)').execute(db);
  await db.schema.dropTable('request_logs').execute();
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('teams').execute();
}
