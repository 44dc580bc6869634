import type { Db } from '../../storage/sql/index.js';
import { emailsRepo, engagementRepo } from '../../storage/repos/index.js';
import { changeRecipient, claimLapsedSubmissions, markEmailSent, recipientById } from '../../storage/repos/index.js';
import type { RecipientChange } from '../../storage/repos/index.js';
import type { EmailRecipientRow, EmailRow, RecipientState } from '../../storage/repos/index.js';
import { recordAttemptRow } from '../../storage/repos/index.js';
import { inRelaxedWriteTransaction, sharedGroupCommit, type GroupCommit } from '../../storage/sql/index.js';
import { addSuppression } from '../suppressions/index.js';
import type { AudienceFromSends } from '../contacts/index.js';
import type { Clock } from '../clock.js';
import { emitEmailEvent, type EmailEventType } from '../outbox/index.js';
import type { Logger } from '../logger.js';
import { newId } from '../ids.js';
import { addressKey } from './addresses.js';
import { envelopeData } from './envelope.js';
import type { Bounce, DeliveryOutcome } from './outcomes.js';
import { retryDelayMs, type RetryJitter } from './retry.js';

// Records what happened to each recipient: the state change, the email's last_event and the
// email.* event (with the spec's envelope, `to` naming only this recipient; and its svc:email.*
// platform event when the recipient is a contact and an automation starts on it) in one transaction.
// Writes from the delivery side go through a group commit.

export interface DeliveryRecorderDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  queueLifetimeMs: number;
  /** Rule 4 of the audience: delivered recipients who are not contacts become contacts. */
  audience?: AudienceFromSends;
  /** Spreads the retry schedule (config `outbound_retry_jitter_percent`); none: the schedule exactly. */
  retryJitter?: RetryJitter;
}

/** Where an outcome may come from: attempts act on claimed rows, reports on sent ones. */
const fromStates: Record<DeliveryOutcome['kind'] | 'report', readonly RecipientState[]> = {
  delivered: ['queued', 'submitting'],
  deferred: ['queued', 'submitting'],
  bounced: ['queued', 'submitting'],
  ambiguous: ['submitting'],
  suppressed: ['queued'],
  failed: ['ambiguous'],
  report: ['submitting', 'ambiguous', 'delivered', 'queued'],
};

/** The claiming worker's copies of the recipient and its email. */
export interface Known {
  row: EmailRecipientRow;
  email: EmailRow;
  /** markSubmitting ran for this attempt (the email is already marked sent). */
  submitted?: boolean;
}

export interface RecordOptions {
  /** A delivery report (DSN) rather than our own attempt: it may correct a delivered or ambiguous recipient. */
  report?: boolean;
  known?: Known;
  /** `host[address]:port` of the server that answered the attempt, kept with its reply. */
  relay?: string | null;
  /**
   * The outbound process (node id) whose claim this attempt is: the outcome is written only while
   * it still holds the recipient's lease, and gives the lease back.
   */
  owner?: string;
}

/** Recipient states the operator may fail by hand (svc admin queue delete): never one being submitted. */
export const operatorFailStates: readonly RecipientState[] = ['scheduled', 'queued', 'held', 'ambiguous'];

/** The states a change may start from, and the claiming process whose lease fences it. */
interface Guard {
  states: readonly RecipientState[];
  owner?: string;
}

export function deliveryRecorder(deps: DeliveryRecorderDeps) {
  // The submitting mark is the contract's record before the DATA terminator: fsynced (FULL).
  // The outcome of our own attempt commits without its own fsync and rides on the next FULL
  // commit (milliseconds later under load): lost in a crash, the recipient stays `submitting`,
  // becomes ambiguous and is never resent — more cautious, never a duplicate. Reports and
  // complaints stay FULL. Both kinds share one queue: a mark and an outcome asked for in the same
  // loop turn commit as one transaction (durable) instead of two, and an outcome waits a few
  // milliseconds for the next mark rather than commit alone (storage/sql/group-commit.ts).
  const { durable: batcher, relaxed: outcomes }: { durable: GroupCommit; relaxed: GroupCommit } = sharedGroupCommit(deps.db);

  /**
   * queued → submitting, written before any message data (hence the DATA terminator) leaves.
   * `known` is the claiming worker's own copy of the rows (it alone acts on a claimed recipient),
   * which saves the reads; every change stays conditional on the state it expects and, with
   * `owner`, on that process still holding the recipient's lease (another may have taken it over).
   */
  const markSubmitting = (recipientId: string, known?: Known, owner?: string) => batcher.run(async (trx) => {
    const now = deps.clock.now().toISOString();
    const row = known?.row ?? await recipientById(trx, recipientId);
    if (!row) return false;
    // `submitting` too: a try on the next MX host after a connection that never took the data.
    const ok = await changeRecipient(trx, recipientId, ['queued', 'submitting'], { state: 'submitting', submitted_at: now, first_attempt_at: row.first_attempt_at ?? now }, now, owner);
    if (ok) await emitSentOnce(trx, row.email_id, now, known?.email);
    return ok;
  });

  const record = (recipientId: string, outcome: DeliveryOutcome, options: RecordOptions = {}) => (options.report ? batcher : outcomes).run(async (trx) => {
    const row = options.known?.row ?? await recipientById(trx, recipientId);
    const email = options.known?.email ?? (row && await emailsRepo(trx).byIdAnyTeam(row.email_id));
    if (!row || !email) return false;
    const allowed = options.report ? fromStates.report : fromStates[outcome.kind];
    if (!options.known && !allowed.includes(row.state)) return false;
    const applied = await apply(trx, email, row, outcome, { states: allowed, owner: options.owner }, !!options.known?.submitted);
    if (applied === 'bounced' && !options.report) await keepRejection(trx, row, outcome);
    if (applied) await keepAttempt(trx, row, outcome, options);
    if (applied) deps.logger.info({ emailId: email.id, recipientId, region: email.region, outcome: outcome.kind, report: !!options.report, state: applied }, 'delivery outcome recorded');
    return applied !== undefined;
  });

  /** The attempt's reply for `svc admin queue show` (a report is kept too, under the attempt it reports on). */
  async function keepAttempt(trx: Db, row: EmailRecipientRow, outcome: DeliveryOutcome, options: RecordOptions) {
    if (outcome.kind === 'suppressed' || outcome.kind === 'failed') return;
    const reply = outcome.kind === 'ambiguous' ? outcome.reason : outcome.response;
    await recordAttemptRow(trx, {
      id: newId(), email_id: row.email_id, recipient_id: row.id, attempt: options.report ? row.attempts : row.attempts + 1,
      at: deps.clock.now().toISOString(), outcome: options.report ? `${outcome.kind} (report)` : outcome.kind,
      reply: reply.slice(0, 1000), relay: options.relay ?? null,
    });
  }

  /** A remote "no such mailbox" to our own attempt: the evidence behind dead_address. */
  async function keepRejection(trx: Db, row: EmailRecipientRow, outcome: DeliveryOutcome) {
    if (outcome.kind !== 'bounced' || outcome.bounce.type !== 'Permanent' || outcome.bounce.subType !== 'NoEmail') return;
    await emailsRepo(trx).recordRejection(addressKey(row.address), row.team_id, deps.clock.now().toISOString());
  }

  async function emitSentOnce(trx: Db, emailId: string, now: string, known?: EmailRow) {
    if (!(await markEmailSent(trx, emailId, now))) return;
    const email = known ?? await emailsRepo(trx).byIdAnyTeam(emailId);
    if (email) await emitEmailEvent(trx, email, 'email.sent', envelopeData(email), new Date(now));
  }

  /**
   * `sentDone`: this attempt already marked the email sent (markSubmitting ran). `from.owner`: the
   * change is the claiming process's, fenced by its lease, which it gives back.
   */
  async function apply(trx: Db, email: EmailRow, row: EmailRecipientRow, outcome: DeliveryOutcome, from: Guard, sentDone = false): Promise<RecipientState | undefined> {
    const now = deps.clock.now();
    const at = now.toISOString();
    const released: Partial<RecipientChange> = from.owner === undefined ? {} : { lease_owner: null, lease_until: null };
    const change = (c: RecipientChange) => changeRecipient(trx, row.id, from.states, { ...released, ...c }, at, from.owner);
    const notAnAttempt = outcome.kind === 'suppressed' || (outcome.kind === 'deferred' && outcome.internalRetryMs !== undefined);
    const attempts = row.attempts + (notAnAttempt ? 0 : 1);
    const event = async (type: EmailEventType, extra: Record<string, unknown> = {}) => {
      await emitEmailEvent(trx, email, type, envelopeData(email, [row.address], extra), now);
      await emailsRepo(trx).setLastEvent(email.id, type.slice('email.'.length), at);
    };
    switch (outcome.kind) {
      case 'delivered': {
        if (!(await change({ state: 'delivered', attempts, last_response: outcome.response, first_attempt_at: row.first_attempt_at ?? at }))) return undefined;
        if (!sentDone) await emitSentOnce(trx, email.id, at, email);
        await event('email.delivered');
        await deps.audience?.addDelivered(trx, email.team_id, row.address, now);
        return 'delivered';
      }
      case 'deferred': {
        const first = row.first_attempt_at ?? at;
        const expires = new Date(Date.parse(first) + deps.queueLifetimeMs);
        if (now >= expires) {
          const bounce: Bounce = { type: 'Transient', subType: outcome.delayType === 'MailboxFull' ? 'MailboxFull' : 'General', message: `Gave up after ${attempts} attempts: the message could not be delivered before it expired.`, diagnosticCode: outcome.response ? [outcome.response] : [] };
          return apply(trx, email, { ...row, first_attempt_at: first }, { kind: 'bounced', response: outcome.response, bounce }, from, sentDone);
        }
        const next = new Date(now.getTime() + (outcome.internalRetryMs ?? retryDelayMs(attempts, deps.retryJitter))).toISOString();
        if (!(await change({ state: 'queued', attempts, next_attempt_at: next, first_attempt_at: first, expires_at: expires.toISOString(), last_response: outcome.response, submitted_at: null }))) return undefined;
        if (!sentDone) await emitSentOnce(trx, email.id, at, email);
        await event('email.delivery_delayed', { delay: { type: outcome.delayType, expirationTime: expires.toISOString(), delayedRecipients: [row.address] } });
        return 'queued';
      }
      case 'bounced': {
        const b = outcome.bounce;
        if (!(await change({ state: 'bounced', attempts, last_response: outcome.response, bounce_type: b.type, bounce_sub_type: b.subType, next_attempt_at: null }))) return undefined;
        if (!sentDone) await emitSentOnce(trx, email.id, at, email);
        await event('email.bounced', { bounce: { type: b.type, subType: b.subType, message: b.message, diagnosticCode: b.diagnosticCode } });
        if (b.type === 'Permanent' && !outcome.keepAddress) await addSuppression(trx, email.team_id, row.address, 'bounce', email.id, deps.clock);
        return 'bounced';
      }
      case 'ambiguous': {
        if (!(await change({ state: 'ambiguous', attempts, last_response: outcome.reason }))) return undefined;
        return 'ambiguous';
      }
      case 'failed': {
        if (!(await change({ state: 'failed', next_attempt_at: null }))) return undefined;
        await event('email.failed', { failed: { reason: outcome.reason } });
        return 'failed';
      }
      case 'suppressed': {
        if (!(await change({ state: 'suppressed', next_attempt_at: null }))) return undefined;
        await event('email.suppressed', { suppressed: { reason: outcome.origin, type: 'OnAccountSuppressionList', message: `The recipient is on the team's suppression list (${outcome.origin}).`, diagnosticCode: [] } });
        return 'suppressed';
      }
    }
  }

  /**
   * Recipients a stopped process left in `submitting` may have had their data sent: ambiguous.
   * Only rows whose lease lapsed (their process died, or stopped before leases existed): another
   * live process's submissions are its own. Each is claimed first, so two processes recovering
   * at once never both record it. `owner`: the recovering process's node id; `deadOwners`: node ids
   * of processes known dead (the predecessors on this data folder), whose rows need no lapse.
   */
  const recoverInterrupted = async (regions: readonly string[], owner = `recovery-${newId()}`, deadOwners: readonly string[] = []): Promise<number> => {
    let total = 0;
    for (;;) {
      const now = deps.clock.now();
      const lease = { owner, until: new Date(now.getTime() + 60_000).toISOString() };
      const rows = await inRelaxedWriteTransaction(deps.db, (trx) => claimLapsedSubmissions(trx, regions, now.toISOString(), lease, 500, deadOwners));
      for (const row of rows) await record(row.id, { kind: 'ambiguous', reason: 'interrupted: the process stopped during the submission, the data may have been sent' }, { owner });
      total += rows.length;
      if (rows.length < 500) break;
    }
    if (total) deps.logger.warn({ regions, recipients: total }, 'submissions interrupted by a stop are ambiguous: never resent');
    return total;
  };

  /** A complaint (feedback loop report, or the simulator's complained@): event and suppression. */
  const recordComplaint = (recipientId: string, options: { keepAddress?: boolean } = {}) => batcher.run(async (trx) => {
    const row = await recipientById(trx, recipientId);
    const email = row && await emailsRepo(trx).byIdAnyTeam(row.email_id);
    if (!row || !email) return false;
    const now = deps.clock.now();
    await emitEmailEvent(trx, email, 'email.complained', envelopeData(email, [row.address]), now);
    await emailsRepo(trx).setLastEvent(email.id, 'complained', now.toISOString());
    await engagementRepo(trx).markComplained(row.id, now.toISOString());
    if (!options.keepAddress) await addSuppression(trx, email.team_id, row.address, 'complaint', email.id, deps.clock);
    return true;
  });

  /**
   * The operator gives up on a recipient (svc admin queue delete): failed with the reason and its
   * `email.failed` event, like the ambiguous sweep; false when it is no longer in a state the
   * operator may fail (the outbound queue took it meanwhile, or it is final).
   */
  const failByOperator = (recipientId: string, reason: `deleted_by_operator${string}`) => batcher.run(async (trx) => {
    const row = await recipientById(trx, recipientId);
    const email = row && await emailsRepo(trx).byIdAnyTeam(row.email_id);
    if (!row || !email || !operatorFailStates.includes(row.state)) return false;
    const applied = await apply(trx, email, row, { kind: 'failed', reason }, { states: operatorFailStates });
    if (!applied) return false;
    await changeRecipient(trx, row.id, ['failed'], { state: 'failed', last_response: reason }, deps.clock.now().toISOString());
    deps.logger.info({ emailId: email.id, recipientId, region: email.region, state: 'failed', reason }, 'recipient failed by the operator');
    return true;
  });

  return { markSubmitting, record, recoverInterrupted, recordComplaint, failByOperator };
}

export type DeliveryRecorder = ReturnType<typeof deliveryRecorder>;
