import type { Kysely } from 'kysely';

// A store trigger with `reentry_after` asks when the contact last entered the automation
// (repos/automations.ts lastEntry): on (team_id, contact_id, automation_id) alone that read every
// run of the contact in the automation and sorted them, so each event cost more as the contact's
// history grew. With created_at last the newest is the first entry read. The three-column prefix
// still serves the exit check (runsExitingOn).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('automation_runs_contact_entered').on('automation_runs')
    .columns(['team_id', 'contact_id', 'automation_id', 'created_at']).execute();
  await db.schema.dropIndex('automation_runs_contact').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('automation_runs_contact').on('automation_runs').columns(['team_id', 'contact_id', 'automation_id']).execute();
  await db.schema.dropIndex('automation_runs_contact_entered').execute();
}
