import { sql, type Kysely } from 'kysely';

// Custom events and automations (spec Automation, Custom event definition).
// - event_definitions: a team's custom event names and schemas; deleted ones stay with the name free.
// - custom_events: every accepted POST /events/send (custom and store events); a store event sent
//   with only a browser's anonymous id waits here (contact_id null) until the browser is tied.
// - store_browsers: which contact a browser's anonymous id belongs to.
// - automations + automation_versions: identity and immutable graphs; `trigger_event` is the
//   current version's trigger, what enrolment looks automations up by.
// - automation_exit_events: per version, the events that end a run (looked up when one arrives).
// - automation_runs: one per contact per enrolling event; the unique (automation, source event,
//   contact) makes a redelivered event enrol once.
// - automation_run_steps: what each step of a run did; its primary key (run, step) is the
//   idempotency key of a step's effect (a send_email step's email id is recorded here).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('event_definitions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('schema', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text')
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('event_definitions_live_name').on('event_definitions').columns(['team_id', 'name']).unique()
    .where(sql.ref('deleted_at'), 'is', null).execute();
  await db.schema.createIndex('event_definitions_team').on('event_definitions').columns(['team_id', 'id']).execute();

  await db.schema.createTable('custom_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text')
    .addColumn('anonymous_id', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('start_flows', 'integer', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('custom_events_idempotency').on('custom_events').columns(['team_id', 'idempotency_key']).unique()
    .where(sql.ref('idempotency_key'), 'is not', null).execute();
  await db.schema.createIndex('custom_events_waiting').on('custom_events').columns(['team_id', 'anonymous_id'])
    .where(sql.ref('contact_id'), 'is', null).execute();

  await db.schema.createTable('store_browsers')
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('anonymous_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('store_browsers_pk', ['team_id', 'anonymous_id'])
    .execute();

  await db.schema.createTable('automations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('trigger_event', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text')
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('automations_team').on('automations').columns(['team_id', 'id']).execute();
  await db.schema.createIndex('automations_trigger').on('automations').columns(['team_id', 'trigger_event'])
    .where(sql.ref('deleted_at'), 'is', null).execute();

  await db.schema.createTable('automation_versions')
    .addColumn('automation_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('connections', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('automation_versions_pk', ['automation_id', 'version'])
    .execute();

  await db.schema.createTable('automation_exit_events')
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('automation_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('event_name', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('automation_exit_events_pk', ['automation_id', 'version', 'event_name'])
    .execute();
  await db.schema.createIndex('automation_exit_events_name').on('automation_exit_events').columns(['team_id', 'event_name']).execute();

  await db.schema.createTable('automation_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('automation_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('source_event_id', 'text', (c) => c.notNull())
    .addColumn('event_name', 'text', (c) => c.notNull())
    .addColumn('event_data', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .execute();
  await db.schema.createIndex('automation_runs_once').on('automation_runs').columns(['automation_id', 'source_event_id', 'contact_id']).unique().execute();
  await db.schema.createIndex('automation_runs_list').on('automation_runs').columns(['automation_id', 'id']).execute();
  await db.schema.createIndex('automation_runs_contact').on('automation_runs').columns(['team_id', 'contact_id', 'automation_id']).execute();

  await db.schema.createTable('automation_run_steps')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('step_key', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('output', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .addPrimaryKeyConstraint('automation_run_steps_pk', ['run_id', 'step_key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'automation_run_steps', 'automation_runs', 'automation_exit_events', 'automation_versions', 'automations',
    'store_browsers', 'custom_events', 'event_definitions',
  ]) await db.schema.dropTable(table).execute();
}
