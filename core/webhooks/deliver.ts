import type { Db } from '../../storage/sql/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import type { SecretBox } from '../../storage/files/index.js';
import { webhooksRepo, type DeliveryPatch, type WebhookAttemptRow, type WebhookDeliveryRow, type WebhookEndpointRow } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { OpsMetrics } from '../ops-metrics.js';
import type { AttemptRecorder } from './recorder.js';
import { decide } from './retry.js';
import type { Sender, SendOutcome } from './ports.js';
import { signRequest } from './signing.js';

export interface DeliverDeps {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  sender: Sender;
  logger: Logger;
  /** This process's claim name. */
  owner: string;
  recorder: AttemptRecorder;
  metrics: OpsMetrics;
}

/** The body sent for an outbox event: the spec's envelope. Built the same way on every attempt. */
export function envelopeOf(event: { type: string; created_at: string; data: string }): string {
  return JSON.stringify({ type: event.type, created_at: event.created_at, data: JSON.parse(event.data) as unknown });
}

// Opened secrets by sealed text: opening costs a cipher set-up per delivery otherwise. A rotation
// seals a new value, so a stale entry is never used; the map is emptied when it grows large.
const opened = new Map<string, string>();

function openCached(secretBox: SecretBox, sealed: string): string {
  let plain = opened.get(sealed);
  if (plain === undefined) {
    if (opened.size >= 10_000) opened.clear();
    plain = secretBox.open(sealed);
    opened.set(sealed, plain);
  }
  return plain;
}

/** The secrets that sign now: the current one, then a rotated-out one still inside its overlap. */
export function signingSecrets(endpoint: WebhookEndpointRow, secretBox: SecretBox, at: Date): string[] {
  const secrets = [openCached(secretBox, endpoint.secret_sealed)];
  if (endpoint.previous_secret_sealed && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > at.toISOString()) {
    secrets.push(openCached(secretBox, endpoint.previous_secret_sealed));
  }
  return secrets;
}

/**
 * Makes one attempt at a claimed message and records it with what follows (done, retry, failed).
 * With `claimNext`, the same transaction claims the endpoint's next due message, returned for the
 * caller to send in the slot just freed (one commit per delivery instead of two).
 */
export async function deliverClaimed(deps: DeliverDeps, message: WebhookDeliveryRow, claimNext: boolean): Promise<WebhookDeliveryRow[]> {
  const repo = webhooksRepo(deps.db);
  const endpoint = await repo.endpointById(message.endpoint_id);
  const event = await eventsRepo(deps.db).byId(message.team_id, message.event_id);
  if (!endpoint || endpoint.status !== 'enabled' || !event) {
    const reason = !event ? 'event missing' : 'endpoint disabled';
    await repo.finishClaimed(message.id, deps.owner, { status: 'failed', next_attempt_at: null, lease_until: null, lease_owner: null, last_error: reason, updated_at: deps.clock.now().toISOString() });
    return [];
  }
  const body = envelopeOf(event);
  const sentAt = deps.clock.now();
  const headers = signRequest(signingSecrets(endpoint, deps.secretBox, sentAt), message.id, sentAt, body);
  const outcome = await deps.sender.send(endpoint.url, headers, body);
  return recordAttempt(deps, message, endpoint, outcome, sentAt, claimNext);
}

async function recordAttempt(
  deps: DeliverDeps, message: WebhookDeliveryRow, endpoint: WebhookEndpointRow, outcome: SendOutcome, sentAt: Date, claimNext: boolean,
): Promise<WebhookDeliveryRow[]> {
  const attemptsMade = message.attempts_made + 1;
  const decision = decide(outcome, attemptsMade);
  const now = deps.clock.now();
  const attempt: WebhookAttemptRow = {
    id: newId(), team_id: message.team_id, endpoint_id: message.endpoint_id, delivery_id: message.id, event_type: message.event_type,
    attempted_at: sentAt.toISOString(), trigger: message.replay ? 'replay' : message.attempts_made === 0 ? 'scheduled' : 'retry',
    result: decision.kind === 'succeeded' ? 'succeeded' : 'failed', status_code: outcome.statusCode, duration_ms: outcome.durationMs,
    response: outcome.response, error: outcome.error,
  };
  const patch: DeliveryPatch = {
    attempts_made: attemptsMade, lease_until: null, lease_owner: null, replay: 0, updated_at: now.toISOString(),
    last_status_code: outcome.statusCode, last_error: outcome.error,
    ...(decision.kind === 'succeeded' ? { status: 'succeeded', next_attempt_at: null }
      : decision.kind === 'retry' ? { status: 'pending', next_attempt_at: new Date(now.getTime() + decision.delayMs).toISOString() }
        : { status: 'failed', next_attempt_at: null }),
  };
  const next = await deps.recorder.record({
    attempt, messageId: message.id, endpointId: endpoint.id, teamId: message.team_id, patch,
    gone: decision.kind === 'failed' && decision.reason === 'gone', claimNext, at: now,
  });
  deps.metrics.webhookAttempt({ outcome: decision.kind, seconds: outcome.durationMs / 1000 });
  const log = { messageId: message.id, endpointId: endpoint.id, teamId: message.team_id, attempt: attemptsMade, status: outcome.statusCode, ms: outcome.durationMs };
  if (decision.kind === 'succeeded') deps.logger.debug(log, 'webhook delivered');
  else if (decision.kind === 'retry') deps.logger.info({ ...log, error: outcome.error, nextAttemptAt: patch.next_attempt_at }, 'webhook attempt failed; retry scheduled');
  else deps.logger.warn({ ...log, error: outcome.error, reason: decision.reason }, decision.reason === 'gone' ? 'webhook endpoint answered 410; endpoint disabled' : 'webhook message failed');
  return next;
}
