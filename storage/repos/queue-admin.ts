import { sql } from 'kysely';
import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import type { EmailAttemptRow, EmailRecipientRow } from './emails-tables.js';

// The operator's view of the outbound queue (svc admin queue …): grouped counts, filtered lists,
// each attempt's reply, and the hold / release / flush moves. Every move is conditional on the
// state it expects, so a recipient the outbound queue claimed meanwhile is left to it.

/** Recipient states still in the queue's hands: waiting for a time, a slot, a reply, a report or the operator. */
export const QUEUE_STATES = ['scheduled', 'queued', 'held', 'submitting', 'ambiguous'] as const;

export interface QueueCountRow {
  region: string;
  domain: string;
  state: string;
  /** Of `queued` rows, those tried before (deferred). */
  retried: number;
  count: number;
  /** The oldest email's acceptance time. */
  oldest: string | null;
  /** The soonest next attempt among queued rows. */
  next_attempt_at: string | null;
}

/** One count per (region, destination domain, state), over the rows still in the queue. */
export async function queueCounts(db: Db, region?: string): Promise<QueueCountRow[]> {
  let q = db.selectFrom('email_recipients as r').innerJoin('emails as e', 'e.id', 'r.email_id')
    .select(['r.region', 'r.domain', 'r.state', sql<number>`count(*)`.as('count'),
      sql<number>`sum(case when r.attempts > 0 then 1 else 0 end)`.as('retried'),
      sql<string | null>`min(e.created_at)`.as('oldest'), sql<string | null>`min(r.next_attempt_at)`.as('next_attempt_at')])
    .where('r.state', 'in', QUEUE_STATES);
  if (region) q = q.where('r.region', '=', region);
  const rows = await q.groupBy(['r.region', 'r.domain', 'r.state']).execute();
  return rows.map((r) => ({ ...r, count: Number(r.count), retried: Number(r.retried ?? 0) }));
}

export interface QueueFilter {
  region?: string;
  domain?: string;
  /** A recipient state, or `deferred` (queued after a failed attempt). */
  state?: string;
  teamId?: string;
  emailId?: string;
  /** Only emails accepted at or before this time. */
  acceptedBefore?: string;
}

/** A queued recipient with what the listing shows of its email. */
export interface QueueListRow extends EmailRecipientRow {
  created_at: string;
  from_email: string;
  subject: string;
}

/** Recipients still in the queue, oldest email first (ids are time-ordered). */
export async function queueRows(db: Db, filter: QueueFilter, limit: number): Promise<QueueListRow[]> {
  let q = db.selectFrom('email_recipients as r').innerJoin('emails as e', 'e.id', 'r.email_id')
    .selectAll('r').select(['e.created_at', 'e.from_email', 'e.subject']);
  if (filter.state === 'deferred') q = q.where('r.state', '=', 'queued').where('r.attempts', '>', 0);
  else if (filter.state) q = q.where('r.state', '=', filter.state as EmailRecipientRow['state']);
  else q = q.where('r.state', 'in', QUEUE_STATES);
  if (filter.region) q = q.where('r.region', '=', filter.region);
  if (filter.domain) q = q.where('r.domain', '=', filter.domain);
  if (filter.teamId) q = q.where('r.team_id', '=', filter.teamId);
  if (filter.emailId) q = q.where('r.email_id', '=', filter.emailId);
  if (filter.acceptedBefore) q = q.where('e.created_at', '<=', filter.acceptedBefore);
  return q.orderBy('r.email_id').orderBy('r.idx').limit(limit).execute();
}

/** Which rows a move acts on: one email's, one destination domain's, or one region's. */
export interface QueueTarget {
  emailId?: string;
  domain?: string;
  region?: string;
}

function targeted(db: Db, target: QueueTarget, state: EmailRecipientRow['state']) {
  let q = db.updateTable('email_recipients').where('state', '=', state);
  if (target.emailId) q = q.where('email_id', '=', target.emailId);
  if (target.domain) q = q.where('domain', '=', target.domain);
  if (target.region) q = q.where('region', '=', target.region);
  return q;
}

async function regionsOf(db: Db, target: QueueTarget, state: EmailRecipientRow['state']): Promise<string[]> {
  let q = db.selectFrom('email_recipients').select('region').distinct().where('state', '=', state);
  if (target.emailId) q = q.where('email_id', '=', target.emailId);
  if (target.domain) q = q.where('domain', '=', target.domain);
  if (target.region) q = q.where('region', '=', target.region);
  return (await q.execute()).map((r) => r.region);
}

export interface QueueMove {
  count: number;
  /** The regions whose rows moved: their outbound queues are woken. */
  regions: string[];
}

/** queued → held: the outbound queue never claims a held row. */
export async function holdRecipients(db: Db, target: QueueTarget, at: string): Promise<QueueMove> {
  const regions = await regionsOf(db, target, 'queued');
  const r = await targeted(db, target, 'queued').set({ state: 'held', updated_at: at }).executeTakeFirst();
  return { count: Number(r.numUpdatedRows), regions };
}

/** held → queued, due at the time it had (at once when that has passed). */
export async function releaseRecipients(db: Db, target: QueueTarget, at: string): Promise<QueueMove> {
  const regions = await regionsOf(db, target, 'held');
  // Free of any claim made before the hold, so whichever outbound process looks first takes it.
  const r = await targeted(db, target, 'held').set({ state: 'queued', lease_owner: null, lease_until: null, updated_at: at }).executeTakeFirst();
  return { count: Number(r.numUpdatedRows), regions };
}

/** Queued rows due now: their next attempt brought forward to `now` (held rows stay held). */
export async function flushRecipients(db: Db, target: QueueTarget, now: string): Promise<QueueMove> {
  const regions = await regionsOf(db, target, 'queued');
  await targeted(db, target, 'queued').where('next_attempt_at', '>', now).set({ next_attempt_at: now, updated_at: now }).execute();
  // Every queued row of the target is due now: those brought forward and those already due.
  const r = await targeted(db, target, 'queued').set({ updated_at: now }).executeTakeFirst();
  return { count: Number(r.numUpdatedRows), regions };
}

/** A scheduled email the operator deletes leaves `scheduled` first, so the release never queues it. */
export async function lockScheduled(db: Db, emailId: string, at: string): Promise<boolean> {
  const r = await db.updateTable('emails').set({ status: 'dispatched', updated_at: at })
    .where('id', '=', emailId).where('status', '=', 'scheduled').executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

const attemptColumns = ['id', 'email_id', 'recipient_id', 'attempt', 'at', 'outcome', 'reply', 'relay'] as const;

/** One attempt's row, in the transaction of its outcome (compiled once per dialect: it is on the delivery path). */
export async function recordAttemptRow(db: Db, row: EmailAttemptRow): Promise<void> {
  const insert = shapedStatement(db, 'recordAttemptRow', (m) => db.insertInto('email_attempts')
    .values(Object.fromEntries(attemptColumns.map((c) => [c, m(c)])) as unknown as EmailAttemptRow));
  await insert(db, row as unknown as Record<string, unknown>);
}

/** An email's attempts, per recipient in time order. */
export const attemptsOf = (db: Db, emailId: string): Promise<EmailAttemptRow[]> =>
  db.selectFrom('email_attempts').selectAll().where('email_id', '=', emailId).orderBy('recipient_id').orderBy('at').orderBy('id').execute();
