import { sql, type QueryResult } from 'kysely';
import { paddedLength } from '../sql/chunked.js';
import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { claimLeased, leaseClaimQuery } from '../sql/lease-claim.js';
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

/**
 * When the next queued recipient or scheduled email of these regions falls due, if any. A queued
 * recipient another process holds under a live lease is not this process's to wait for (its
 * lapse is found by the lease tick), so it is passed over: the scan walks the queue index in due
 * order and stops at the first free row.
 */
export async function nextDueAt(db: Db, regions: readonly string[], now?: string): Promise<string | undefined> {
  let q = db.selectFrom('email_recipients').select('next_attempt_at as at')
    .where('region', 'in', regions).where('state', '=', 'queued');
  if (now) q = q.where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]));
  const queued = await q.orderBy('next_attempt_at').limit(1).executeTakeFirst();
  const scheduled = await db.selectFrom('emails').select(sql<string | null>`min(scheduled_at)`.as('at'))
    .where('region', 'in', regions).where('status', '=', 'scheduled').executeTakeFirst();
  const times = [queued?.at, scheduled?.at].filter((t): t is string => !!t).sort();
  return times[0];
}

/** A claim of one outbound process (its node id) until a time. */
export interface RecipientLease {
  owner: string;
  until: string;
}

const leaseFree = (now: string) => (eb: any) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]);

/**
 * Claims due queued recipients of these regions for one outbound process: rows no process holds
 * (or whose holder's lease lapsed), in due order. `FOR UPDATE SKIP LOCKED` on PostgreSQL, so two
 * processes claiming at once pass over each other's rows; SQLite's one writer does the same.
 * Held, scheduled and every other state are never claimed: only `queued`.
 */
export async function claimDueRecipients(
  db: Db, regions: readonly string[], now: string, lease: RecipientLease, limit: number, exclude: readonly string[] = [],
): Promise<EmailRecipientRow[]> {
  // Compiled once per shape (each outbound claim built it anew: ~2 % of the process). The rows
  // passed over (in flight, buffered) are padded with the last id repeated, so a few shapes serve
  // every claim; the limit is bound.
  const passedOver = paddedLength(exclude.length);
  const claim = shapedStatement(db, `claimDueRecipients|${regions.length}|${passedOver}`, (m) => {
    let chosen = db.selectFrom('email_recipients').select('id')
      .where('region', 'in', regions.map((_, i) => m(`region${i}`))).where('state', '=', m('queued') as RecipientState)
      .where('next_attempt_at', '<=', m('now')).where(leaseFree(m('now')));
    if (passedOver) chosen = chosen.where('id', 'not in', Array.from({ length: passedOver }, (_, i) => m(`skip${i}`)));
    return leaseClaimQuery(db, {
      table: 'email_recipients', chosen: chosen.orderBy('next_attempt_at').limit(m('limit') as unknown as number),
      set: { lease_owner: m('owner'), lease_until: m('until') }, still: { column: 'state', values: [m('queued')] },
    });
  });
  const values: Record<string, unknown> = { now, owner: lease.owner, until: lease.until, queued: 'queued', limit };
  regions.forEach((region, i) => { values[`region${i}`] = region; });
  for (let i = 0; i < passedOver; i++) values[`skip${i}`] = exclude[Math.min(i, exclude.length - 1)];
  return (await claim(db, values)).rows as EmailRecipientRow[];
}

/**
 * Claims `submitting` recipients whose holder's lease lapsed (or that never had one: left by a
 * process before leases), so their recovery (ambiguous: never resent) is this process's alone.
 */
export function claimLapsedSubmissions(
  db: Db, regions: readonly string[], now: string, lease: RecipientLease, limit: number, deadOwners: readonly string[] = [],
): Promise<EmailRecipientRow[]> {
  // Never the claimer's own: its submissions are in flight in this very process. A process known
  // dead (`deadOwners`) needs no lapse.
  const free = (eb: any) => (deadOwners.length
    ? eb.or([leaseFree(now)(eb), eb('lease_owner', 'in', deadOwners)])
    : leaseFree(now)(eb));
  const chosen = db.selectFrom('email_recipients').select('id')
    .where('state', '=', 'submitting').where('region', 'in', regions).where(free)
    .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '<>', lease.owner)])).limit(limit);
  return claimLeased<EmailRecipientRow>(db, {
    table: 'email_recipients', chosen, set: { lease_owner: lease.owner, lease_until: lease.until },
    still: { column: 'state', values: ['submitting'] },
  });
}

/** Extends the owner's leases on these recipients; answers the ids it still held (queued or submitting). */
export async function renewRecipientLeases(db: Db, ids: readonly string[], lease: RecipientLease): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.updateTable('email_recipients').set({ lease_until: lease.until })
    .where('id', 'in', ids).where('lease_owner', '=', lease.owner).where('state', 'in', ['queued', 'submitting'])
    .returning('id').execute();
  return rows.map((r) => r.id);
}

/** Frees the queued recipients processes known dead had claimed (their successor on the same folder knows): claimable at once. */
export async function releaseDeadLeases(db: Db, regions: readonly string[], deadOwners: readonly string[]): Promise<number> {
  if (deadOwners.length === 0) return 0;
  const r = await db.updateTable('email_recipients').set({ lease_owner: null, lease_until: null })
    .where('region', 'in', regions).where('state', '=', 'queued').where('lease_owner', 'in', deadOwners).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Gives back queued recipients the owner claimed but will not attempt (a stop): others take them at once. */
export async function releaseRecipientLeases(db: Db, ids: readonly string[], owner: string): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.updateTable('email_recipients').set({ lease_owner: null, lease_until: null })
    .where('id', 'in', ids).where('lease_owner', '=', owner).where('state', '=', 'queued').executeTakeFirst();
  return Number(r.numUpdatedRows);
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
  lease_owner?: string | null;
  lease_until?: string | null;
}

/**
 * Moves a recipient from one of `from` to a new state; false when it was no longer there. With
 * `owner`, only while that outbound process still holds the recipient's lease: an attempt's
 * changes are fenced by its claim.
 */
export async function changeRecipient(
  db: Db, id: string, from: readonly RecipientState[], change: RecipientChange, at: string, owner?: string,
): Promise<boolean> {
  // Every delivery runs two of these: compiled once per shape (the columns set, the states left).
  // As Kysely does, a column whose value is undefined is left as it is, not set to NULL.
  const columns = (Object.keys(change) as (keyof RecipientChange)[]).filter((c) => change[c] !== undefined).sort();
  const shape = `changeRecipient|${columns.join(',')}|${from.length}|${owner === undefined ? '' : 'owned'}`;
  const update = shapedStatement(db, shape, (m) => {
    let q = db.updateTable('email_recipients')
      .set({ ...Object.fromEntries(columns.map((c) => [c, m(c)])), updated_at: m('updated_at') })
      .where('id', '=', m('id')).where('state', 'in', from.map((_, i) => m(`from${i}`) as RecipientState));
    if (owner !== undefined) q = q.where('lease_owner', '=', m('owner'));
    return q;
  });
  const values: Record<string, unknown> = { updated_at: at, id };
  for (const c of columns) values[c] = change[c];
  from.forEach((state, i) => { values[`from${i}`] = state; });
  if (owner !== undefined) values.owner = owner;
  return changed(await update(db, values));
}

const changed = (result: QueryResult<unknown>) => (result.numAffectedRows ?? 0n) > 0n;

/** One recipient by its id; every delivery step and tracked hit reads one, so it is compiled once. */
export async function recipientById(db: Db, id: string): Promise<EmailRecipientRow | undefined> {
  const read = shapedStatement(db, 'recipientById', (m) => db.selectFrom('email_recipients').selectAll().where('id', '=', m('id')));
  return (await read(db, { id })).rows[0] as EmailRecipientRow | undefined;
}

/** Sets the email's last_event to `sent` the first time; answers whether it was the first time. */
export async function markEmailSent(db: Db, emailId: string, at: string): Promise<boolean> {
  const update = shapedStatement(db, 'markEmailSent', (m) => db.updateTable('emails').set({ last_event: m('sent'), updated_at: m('at') })
    .where('id', '=', m('id')).where('last_event', '=', m('queued')));
  return changed(await update(db, { sent: 'sent', at, id: emailId, queued: 'queued' }));
}

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
