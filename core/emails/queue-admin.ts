import type { Db } from '../../storage/sql/index.js';
import {
  attemptsOf, emailsRepo, flushRecipients, holdRecipients, lockScheduled, queueCounts, queueRows, releaseRecipients,
  type QueueFilter, type QueueMove, type QueueTarget,
} from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { invalidParameter, notFound, ServiceError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import type { Logger } from '../logger.js';
import { isRegionName } from '../regions.js';
import { operatorFailStates, type DeliveryRecorder } from './delivery.js';
import { durationMs, queueStates } from '../queue-words.js';
import { queueEntry, queuedEmailView, queueSummary, type QueueEntry, type QueuedEmailView, type QueueSummary } from './queue-view.js';

// The operator's queue tools (svc admin queue … over the admin socket): read the outbound queue
// by region and destination, look at one message with every reply it met, and act on it — flush
// (due now), hold and release, delete. A delete never drops mail silently: each recipient not yet
// final is failed through the delivery recorder, with its `email.failed` event (and webhooks).

export interface QueueAdminDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  recorder: Pick<DeliveryRecorder, 'failByOperator'>;
  /** Wakes a region's outbound queue (the Redis wake channel). */
  wake(region: string): void;
}

export interface QueueListQuery {
  region?: string;
  domain?: string;
  state?: string;
  teamId?: string;
  /** A duration (`90s`, `15m`, `2h`, `3d`): only emails accepted at least that long ago. */
  olderThan?: string;
  limit?: string;
}

/** What a flush, hold or release acts on: exactly one of these. */
export interface QueueTargetInput {
  email_id?: unknown;
  domain?: unknown;
  region?: unknown;
}

export interface QueueMoveResult {
  object: 'queue_move';
  action: 'flush' | 'hold' | 'release';
  target: QueueTarget;
  /** Recipients moved (flush: recipients queued and now due). */
  recipients: number;
  regions: string[];
}

export interface QueueDeleteResult {
  object: 'queue_delete';
  email_id: string;
  reason: string;
  /** Recipients failed now, with the reason and an `email.failed` event each. */
  failed: string[];
  /** Recipients that already had their outcome, with it. */
  final: { address: string; state: string }[];
}

const lower = (value: string | undefined) => value?.trim().toLowerCase() || undefined;

function checkRegion(region: string | undefined): string | undefined {
  if (region !== undefined && !isRegionName(region)) {
    throw invalidParameter('region', `\`region\` must be a region svc serves; "${region}" is not one.`);
  }
  return region;
}

function listFilter(query: QueueListQuery, now: Date): QueueFilter {
  const state = lower(query.state);
  if (state && !(queueStates as readonly string[]).includes(state)) {
    throw invalidParameter('state', `\`state\` must be one of ${queueStates.join(', ')}.`);
  }
  let acceptedBefore: string | undefined;
  if (query.olderThan !== undefined) {
    const ms = durationMs(query.olderThan);
    if (ms === undefined) throw invalidParameter('older_than', '`older_than` must be a duration like 90s, 15m, 2h or 3d.');
    acceptedBefore = new Date(now.getTime() - ms).toISOString();
  }
  return { region: checkRegion(lower(query.region)), domain: lower(query.domain), state, teamId: query.teamId, acceptedBefore };
}

function limitOf(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw invalidParameter('limit', '`limit` must be a whole number from 1 to 1000.');
  return n;
}

function targetOf(input: QueueTargetInput, allowRegion: boolean): QueueTarget {
  const given = (['email_id', 'domain', 'region'] as const).filter((k) => input[k] !== undefined && input[k] !== '');
  const allowed = allowRegion ? 'email_id, domain or region' : 'email_id or domain';
  if (given.length !== 1) throw invalidParameter('target', `Give exactly one of ${allowed}.`);
  const [key] = given;
  const value = input[key!];
  if (typeof value !== 'string') throw invalidParameter(key!, `\`${key}\` must be a string.`);
  if (key === 'email_id') {
    if (!looksLikeId(value)) throw invalidParameter('email_id', '`email_id` must be an email id.');
    return { emailId: value.toLowerCase() };
  }
  if (key === 'domain') return { domain: value.trim().toLowerCase() };
  if (!allowRegion) throw invalidParameter('region', `Give exactly one of ${allowed}.`);
  return { region: checkRegion(value.trim().toLowerCase()) };
}

export function queueAdmin(deps: QueueAdminDeps) {
  const now = () => deps.clock.now();
  const emailOf = async (id: string) => {
    const email = looksLikeId(id) ? await emailsRepo(deps.db).byIdAnyTeam(id.toLowerCase()) : undefined;
    if (!email) throw notFound('Email');
    return email;
  };

  async function move(action: QueueMoveResult['action'], input: QueueTargetInput): Promise<QueueMoveResult> {
    const target = targetOf(input, action === 'flush');
    if (target.emailId) await emailOf(target.emailId);
    const at = now().toISOString();
    const moved: QueueMove = action === 'hold' ? await holdRecipients(deps.db, target, at)
      : action === 'release' ? await releaseRecipients(deps.db, target, at) : await flushRecipients(deps.db, target, at);
    // A hold needs no wake: the queue never claims a held row, and one it had read ahead fails its conditional claim.
    if (action !== 'hold') for (const region of moved.regions) deps.wake(region);
    if (moved.count > 0) deps.logger.info({ action, ...target, recipients: moved.count }, 'outbound queue changed by the operator');
    return { object: 'queue_move', action, target, recipients: moved.count, regions: moved.regions };
  }

  return {
    async summary(query: { region?: string; limit?: string }): Promise<QueueSummary> {
      const rows = await queueCounts(deps.db, checkRegion(lower(query.region)));
      return queueSummary(rows, now().toISOString(), limitOf(query.limit, 50));
    },

    async list(query: QueueListQuery): Promise<{ object: 'list'; has_more: boolean; data: QueueEntry[] }> {
      const limit = limitOf(query.limit, 100);
      const rows = await queueRows(deps.db, listFilter(query, now()), limit + 1);
      return { object: 'list', has_more: rows.length > limit, data: rows.slice(0, limit).map(queueEntry) };
    },

    async show(emailId: string, options: { recipient?: string; body?: boolean } = {}): Promise<QueuedEmailView> {
      const email = await emailOf(emailId);
      const repo = emailsRepo(deps.db);
      let recipients = await repo.recipients(email.id);
      if (options.recipient) {
        const wanted = options.recipient.trim().toLowerCase();
        recipients = recipients.filter((r) => r.address.toLowerCase() === wanted || r.id === wanted);
        if (recipients.length === 0) throw notFound('Recipient');
      }
      const attempts = await attemptsOf(deps.db, email.id);
      return queuedEmailView({ email, recipients, attempts, attachments: options.body ? await repo.attachments(email.id) : undefined });
    },

    flush: (input: QueueTargetInput) => move('flush', input),
    hold: (input: QueueTargetInput) => move('hold', input),
    release: (input: QueueTargetInput) => move('release', input),

    /** Fails every recipient not yet final; refused while one is being submitted (its reply decides it). */
    async remove(emailId: string, reasonText?: unknown): Promise<QueueDeleteResult> {
      if (reasonText !== undefined && (typeof reasonText !== 'string' || reasonText.length > 200)) {
        throw invalidParameter('reason', '`reason` must be text of at most 200 characters.');
      }
      const email = await emailOf(emailId);
      const reason: `deleted_by_operator${string}` = reasonText?.trim() ? `deleted_by_operator: ${reasonText.trim()}` : 'deleted_by_operator';
      const recipients = await emailsRepo(deps.db).recipients(email.id);
      const busy = recipients.find((r) => r.state === 'submitting');
      if (busy) throw submitting(email.id, busy.address);
      if (email.status === 'scheduled') await lockScheduled(deps.db, email.id, now().toISOString());
      const failed: string[] = [];
      const final: QueueDeleteResult['final'] = [];
      for (const r of recipients) {
        if (operatorFailStates.includes(r.state) && await deps.recorder.failByOperator(r.id, reason)) failed.push(r.address);
        else if (!operatorFailStates.includes(r.state)) final.push({ address: r.address, state: r.state });
        else throw submitting(email.id, r.address);
      }
      deps.logger.info({ emailId: email.id, failed: failed.length, reason }, 'email deleted from the queue by the operator');
      return { object: 'queue_delete', email_id: email.id, reason, failed, final };
    },
  };
}

const submitting = (emailId: string, address: string) => new ServiceError(409, 'resource_locked',
  `Recipient ${address} of email ${emailId} is being submitted right now; its reply decides it. Try again in a moment.`);

export type QueueAdmin = ReturnType<typeof queueAdmin>;
