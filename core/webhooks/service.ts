import type { Db } from '../../storage/sql/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import type { SecretBox } from '../../storage/files/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { webhooksRepo, type EndpointPatch, type WebhookEndpointRow } from '../../storage/repos/index.js';
import { isoNow, type Clock } from '../clock.js';
import { missingField, notFound, ServiceError, validationError } from '../errors.js';
import { isEventType } from '../outbox/index.js';
import { looksLikeId, newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { envelopeOf } from './deliver.js';
import { newSigningSecret } from './signing.js';
import type { EndpointUrlCheck } from './ports.js';
import { attemptView, messageView, type AttemptView, type MessageItem, type MessageView, type WebhookListItem, type WebhookView } from './views.js';

/** A rotated-out secret keeps signing this long beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface WebhookInput {
  endpoint?: string;
  events?: string[];
  status?: 'enabled' | 'disabled';
}

export interface WebhooksDeps {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  /** The SSRF policy (net/url-policy.ts). */
  checkEndpointUrl: EndpointUrlCheck;
  logger: Logger;
  /** Tells a dispatcher in this process that a message became due. */
  wake(): void;
  /** Refuses the team's next endpoint past its plan's `webhook_endpoint_limit` (the team area's checkLimit). */
  checkEndpointLimit(teamId: string): Promise<void>;
}

type Ref = { object: 'webhook'; id: string };

export function webhooksService(deps: WebhooksDeps) {
  const repo = webhooksRepo(deps.db);
  const endpointOf = async (teamId: string, id: string): Promise<WebhookEndpointRow> => {
    const row = looksLikeId(id) ? await repo.endpoint(teamId, id.toLowerCase()) : undefined;
    if (!row) throw notFound('Webhook');
    return row;
  };
  const messageOf = async (endpoint: WebhookEndpointRow, messageId: string) => {
    const row = looksLikeId(messageId) ? await repo.delivery(endpoint.id, messageId.toLowerCase()) : undefined;
    if (!row) throw notFound('Webhook message');
    return row;
  };

  return {
    async create(teamId: string, input: WebhookInput): Promise<Ref & { signing_secret: string }> {
      if (input.endpoint === undefined || input.endpoint === null) throw missingField('endpoint');
      if (input.events === undefined || input.events === null) throw missingField('events');
      const events = checkEvents(input.events);
      const url = await checkUrl(deps, input.endpoint);
      await deps.checkEndpointLimit(teamId);
      const secret = newSigningSecret();
      const now = isoNow(deps.clock);
      const row: WebhookEndpointRow = {
        id: newId(), team_id: teamId, url, events: JSON.stringify(events), status: 'enabled', secret_sealed: deps.secretBox.seal(secret),
        previous_secret_sealed: null, previous_secret_expires_at: null, from_seq: 0, disabled_reason: null, created_at: now, updated_at: now,
      };
      // The position is read in the insert's transaction: only events written after it reach the endpoint.
      await inTransaction(deps.db, async (trx) => {
        const inTrx = webhooksRepo(trx);
        await inTrx.insertEndpoint({ ...row, from_seq: await inTrx.lastEventSeq() });
      });
      deps.logger.info({ webhookId: row.id, teamId, events: events.length }, 'webhook endpoint created');
      return { object: 'webhook', id: row.id, signing_secret: secret };
    },

    async list(teamId: string, query: RawPageQuery): Promise<ListEnvelope<WebhookListItem>> {
      const page = await repo.listEndpoints(teamId, parsePageQuery(query));
      return listOf(page.data.map(listItem), page.has_more);
    },

    async get(teamId: string, id: string): Promise<WebhookView> {
      const row = await endpointOf(teamId, id);
      return { object: 'webhook', ...listItem(row), signing_secret: deps.secretBox.open(row.secret_sealed) };
    },

    async update(teamId: string, id: string, input: WebhookInput): Promise<Ref> {
      const row = await endpointOf(teamId, id);
      const patch: EndpointPatch = { updated_at: isoNow(deps.clock) };
      if (input.events !== undefined) patch.events = JSON.stringify(checkEvents(input.events));
      if (input.endpoint !== undefined) patch.url = await checkUrl(deps, input.endpoint);
      if (input.status !== undefined) {
        patch.status = input.status;
        if (input.status === 'enabled') patch.disabled_reason = null;
      }
      await inTransaction(deps.db, async (trx) => {
        const inTrx = webhooksRepo(trx);
        await inTrx.updateEndpoint(teamId, row.id, patch);
        // Messages waiting for a disabled endpoint fail now (replay sends them once it is enabled).
        if (patch.status === 'disabled' && row.status !== 'disabled') await inTrx.failWaiting(row.id, 'endpoint disabled', patch.updated_at!);
      });
      if (patch.status && patch.status !== row.status) deps.logger.info({ webhookId: row.id, teamId, status: patch.status }, 'webhook endpoint status changed');
      return { object: 'webhook', id: row.id };
    },

    async remove(teamId: string, id: string): Promise<Ref & { deleted: true }> {
      const row = await endpointOf(teamId, id);
      await inTransaction(deps.db, (trx) => webhooksRepo(trx).deleteEndpoint(teamId, row.id));
      deps.logger.info({ webhookId: row.id, teamId }, 'webhook endpoint deleted');
      return { object: 'webhook', id: row.id, deleted: true };
    },

    /** New secret now; the old one keeps signing (both signatures sent) for 24 hours. */
    async rotateSecret(teamId: string, id: string): Promise<Ref & { signing_secret: string }> {
      const row = await endpointOf(teamId, id);
      const secret = newSigningSecret();
      const now = deps.clock.now();
      await repo.updateEndpoint(teamId, row.id, {
        secret_sealed: deps.secretBox.seal(secret), previous_secret_sealed: row.secret_sealed,
        previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString(), updated_at: now.toISOString(),
      });
      deps.logger.info({ webhookId: row.id, teamId }, 'webhook signing secret rotated');
      return { object: 'webhook', id: row.id, signing_secret: secret };
    },

    async listMessages(teamId: string, id: string, query: RawPageQuery): Promise<ListEnvelope<MessageItem>> {
      const endpoint = await endpointOf(teamId, id);
      const page = await repo.listDeliveries(endpoint.id, parsePageQuery(query));
      return listOf(page.data.map((m) => {
        const { object: _o, payload: _p, ...item } = messageView(m, undefined);
        return item;
      }), page.has_more);
    },

    async getMessage(teamId: string, id: string, messageId: string): Promise<MessageView> {
      const message = await messageOf(await endpointOf(teamId, id), messageId);
      const event = await eventsRepo(deps.db).byId(teamId, message.event_id);
      return messageView(message, event ? JSON.parse(envelopeOf(event)) as unknown : null);
    },

    /** Every attempt at the endpoint (or at one of its messages), newest first. */
    async listAttempts(teamId: string, id: string, messageId: string | undefined, query: RawPageQuery): Promise<ListEnvelope<AttemptView>> {
      const endpoint = await endpointOf(teamId, id);
      const message = messageId === undefined ? undefined : await messageOf(endpoint, messageId);
      const page = await repo.listAttempts(endpoint.id, message?.id, parsePageQuery(query));
      return listOf(page.data.map(attemptView), page.has_more);
    },

    /** Sends a message again, same `wh-id`, with a fresh retry schedule. */
    async replay(teamId: string, id: string, messageId: string): Promise<{ object: 'webhook_event'; id: string }> {
      const endpoint = await endpointOf(teamId, id);
      const message = await messageOf(endpoint, messageId);
      if (endpoint.status !== 'enabled') throw validationError(422, undefined, 'The webhook is disabled; enable it before replaying messages.');
      if (message.status === 'delivering') throw new ServiceError(409, 'resource_locked', 'The message is being delivered right now.');
      const now = isoNow(deps.clock);
      await repo.updateDelivery(message.id, { status: 'pending', attempts_made: 0, next_attempt_at: now, replay: 1, updated_at: now });
      deps.logger.info({ webhookId: endpoint.id, messageId: message.id, teamId }, 'webhook message replay queued');
      deps.wake();
      return { object: 'webhook_event', id: message.id };
    },
  };
}

export type WebhooksService = ReturnType<typeof webhooksService>;

function listItem(row: WebhookEndpointRow): WebhookListItem {
  return { id: row.id, endpoint: row.url, events: JSON.parse(row.events) as string[], status: row.status, created_at: row.created_at };
}

/** Known types only (the spec's closed list), at least one; an unknown name is a wrong field: 400. */
function checkEvents(events: string[]): string[] {
  if (!Array.isArray(events) || events.length === 0) throw validationError(400, 'events', 'The `events` field must list at least one event type.');
  const errors = events.flatMap((type, i) => (isEventType(type) ? [] : [{ path: `events[${i}]`, message: `\`${type}\` is not a known event type` }]));
  if (errors.length > 0) throw new ServiceError(400, 'validation_error', errors.map((e) => e.message).join('; ') + '.', { errors });
  return [...new Set(events)];
}

async function checkUrl(deps: WebhooksDeps, raw: string): Promise<string> {
  const verdict = await deps.checkEndpointUrl(raw);
  if (!verdict.ok) throw validationError(422, 'endpoint', `The \`endpoint\` URL is refused: ${verdict.reason}.`);
  return verdict.href;
}
