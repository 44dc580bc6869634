import { type Kysely } from 'kysely';

// Mail an automation sent (spec Events: the svc:email.* platform events start automations).
// - emails.automation_id / automation_run_id: the automation and run whose send_email step made
//   the email; every svc:email.* platform event of it names them.
// - emails.automation_chain: JSON array of the automation ids whose runs led to this email, the
//   sender last. Enrolment on an svc:email.* event skips every automation in the chain, so mail
//   sent by a flow never re-enrols that flow, directly or through another (core/automations/enrol.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('emails').addColumn('automation_id', 'text').execute();
  await db.schema.alterTable('emails').addColumn('automation_run_id', 'text').execute();
  await db.schema.alterTable('emails').addColumn('automation_chain', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['automation_chain', 'automation_run_id', 'automation_id']) await db.schema.alterTable('emails').dropColumn(column).execute();
}
