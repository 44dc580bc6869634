import { sql, type QueryResult } from 'kysely';
import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import type { EmailRecipientRow, EmailRow, RecipientState } from './emails-tables.js';

// The outbound queue is the email_recipients rows: `queued` ones whose next_attempt_at has come,
// per region. Scheduled emails wait in `scheduled` until dispatched. Every state change here is
// conditional on the state it expects, so two actors (a cancel and the dispatcher, a DSN and the
// sweep) can never both win.

export async function cancelScheduled(db: Db, emailId: string, at: string): Promise<boolean> {
  const r = await db.updateTable('emails').set({ status: 'canceled', last_event: 'canceled', updated_at: at })
    .where('id', '=', emailId).where('status', '=', 'scheduled').executeTakeFirst();
  if (r.numUpdatedRows === 0n) return false;
  await db.updateTable('email_recipients').set({ state: 'canceled', next_attempt_at: null, updated_at: at })
    .where('email_id', '=', emailId).where('state', '=', 'scheduled').execute();
  return true;
}

export async function rescheduleScheduled(db: Db, emailId: string, scheduledAt: string, at: string): Promise<boolean> {
  const r = await db.updateTable('emails').set({ scheduled_at: scheduledAt, updated_at: at })
    .where('id', '=', emailId).where('status', '=', 'scheduled').executeTakeFirst();
  if (r.numUpdatedRows === 0n) return false;
  await db.updateTable('email_recipients').set({ next_attempt_at: scheduledAt, updated_at: at })
    .where('email_id', '=', emailId).where('state', '=', 'scheduled').execute();
  return true;
}

/** Scheduled emails whose time has come, oldest first. */
export const dueScheduled = (db: Db, now: string, limit: number): Promise<EmailRow[]> =>
  db.selectFrom('emails').selectAll().where('status', '=', 'scheduled').where('scheduled_at', '<=', now).orderBy('scheduled_at').limit(limit).execute();

/** scheduled → dispatched: the email is locked and its recipients join the queue. */
export async function dispatchScheduled(db: Db, emailId: string, at: string): Promise<boolean> {
  const r = await db.updateTable('emails').set({ status: 'dispatched', last_event: 'queued', updated_at: at })
    .where('id', '=', emailId).where('status', '=', 'scheduled').executeTakeFirst();
  if (r.numUpdatedRows === 0n) return false;
  await db.updateTable('email_recipients').set({ state: 'queued', next_attempt_at: at, updated_at: at })
    .where('email_id', '=', emailId).where('state', '=', 'scheduled').execute();
  return true;
}

/** Due queued recipients of these regions, leaving out those already being worked on. */
export function dueRecipients(db: Db, regions: readonly string[], now: string, limit: number, exclude: readonly string[]): Promise<EmailRecipientRow[]> {
  let q = db.selectFrom('email_recipients').selectAll()
    .where('region', 'in', regions).where('state', '=', 'queued').where('next_attempt_at', '<=', now);
  if (exclude.length) q = q.where('id', 'not in', exclude);
  return q.orderBy('next_attempt_at').limit(limit).execute();
}

/** When the next queued recipient or scheduled email of these regions falls due, if any. */
export async function nextDueAt(db: Db, regions: readonly string[]): Promise<string | undefined> {
  const queued = await db.selectFrom('email_recipients').select(sql<string | null>`min(next_attempt_at)`.as('at'))
    .where('region', 'in', regions).where('state', '=', 'queued').executeTakeFirst();
  const scheduled = await db.selectFrom('emails').select(sql<string | null>`min(scheduled_at)`.as('at'))
    .where('region', 'in', regions).where('status', '=', 'scheduled').executeTakeFirst();
  const times = [queued?.at, scheduled?.at].filter((t): t is string => !!t).sort();
  return times[0];
}

export interface RecipientChange {
  state: RecipientState;
  attempts?: number;
  next_attempt_at?: string | null;
  first_attempt_at?: string | null;
  submitted_at?: string | null;
  expires_at?: string | null;
  last_response?: string | null;
  bounce_type?: string | null;
  bounce_sub_type?: string | null;
}

/** Moves a recipient from one of `from` to a new state; false when it was no longer there. */
export async function changeRecipient(db: Db, id: string, from: readonly RecipientState[], change: RecipientChange, at: string): Promise<boolean> {
  // Every delivery runs two of these: compiled once per shape (the columns set, the states left).
  // As Kysely does, a column whose value is undefined is left as it is, not set to NULL.
  const columns = (Object.keys(change) as (keyof RecipientChange)[]).filter((c) => change[c] !== undefined).sort();
  const update = shapedStatement(db, `changeRecipient|${columns.join(',')}|${from.length}`, (m) => db.updateTable('email_recipients')
    .set({ ...Object.fromEntries(columns.map((c) => [c, m(c)])), updated_at: m('updated_at') })
    .where('id', '=', m('id')).where('state', 'in', from.map((_, i) => m(`from${i}`) as RecipientState)));
  const values: Record<string, unknown> = { updated_at: at, id };
  for (const c of columns) values[c] = change[c];
  from.forEach((state, i) => { values[`from${i}`] = state; });
  return changed(await update(db, values));
}

const changed = (result: QueryResult<unknown>) => (result.numAffectedRows ?? 0n) > 0n;

export const recipientById = (db: Db, id: string) =>
  db.selectFrom('email_recipients').selectAll().where('id', '=', id).executeTakeFirst();

/** Sets the email's last_event to `sent` the first time; answers whether it was the first time. */
export async function markEmailSent(db: Db, emailId: string, at: string): Promise<boolean> {
  const update = shapedStatement(db, 'markEmailSent', (m) => db.updateTable('emails').set({ last_event: m('sent'), updated_at: m('at') })
    .where('id', '=', m('id')).where('last_event', '=', m('queued')));
  return changed(await update(db, { sent: 'sent', at, id: emailId, queued: 'queued' }));
}

/** Recipients left in `submitting` by a process that stopped, in these regions. */
export const submittingRecipients = (db: Db, regions: readonly string[]) =>
  db.selectFrom('email_recipients').selectAll().where('region', 'in', regions).where('state', '=', 'submitting').execute();

/** Ambiguous submissions older than the cutoff (their submitted_at). */
export const ambiguousBefore = (db: Db, cutoff: string, limit: number) =>
  db.selectFrom('email_recipients').selectAll().where('state', '=', 'ambiguous').where('submitted_at', '<=', cutoff).limit(limit).execute();

/** Which of these (team, address) pairs the teams suppress, with the origin: one query for a claim. */
export async function suppressedAmong(db: Db, rows: readonly { team_id: string; address: string }[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (rows.length === 0) return found;
  const teams = [...new Set(rows.map((r) => r.team_id))];
  const keys = [...new Set(rows.map((r) => r.address.toLowerCase()))];
  const hits = await db.selectFrom('suppressions').select(['team_id', 'email_key', 'origin'])
    .where('team_id', 'in', teams).where('email_key', 'in', keys).execute();
  for (const h of hits) found.set(`${h.team_id}|${h.email_key}`, h.origin);
  return found;
}
