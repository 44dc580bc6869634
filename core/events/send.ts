import type { Db } from '../../storage/sql/index.js';
import { contactsRepo, customEventsRepo } from '../../storage/repos/index.js';
import { emailKeyOf } from '../contacts/index.js';
import { missingField, notFound, validationError, type FieldError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { readIsoInstant } from '../time.js';
import { isStoreEvent, PAYLOAD_BYTES_MAX, payloadProblems, storePayloadProblems, type EventSchema } from './names.js';

// POST /events/send's checks that need no state, and the contact it names.

export interface SendEventInput {
  event?: unknown;
  contact_id?: unknown;
  email?: unknown;
  payload?: unknown;
  anonymous_id?: unknown;
  idempotency_key?: unknown;
  occurred_at?: unknown;
  start_flows?: unknown;
}

export interface CheckedSend {
  name: string;
  store: boolean;
  contactId: string | null;
  email: string | null;
  /** A contact_id or email was sent (not only a browser). */
  contactGiven: boolean;
  payload: Record<string, unknown>;
  anonymousId: string | null;
  idempotencyKey: string | null;
  occurredAt: Date;
  startFlows: boolean;
  /** Throws 422 with one entry per mismatching key. */
  checkPayload(schema: EventSchema | null): void;
}

const aheadMs = 5 * 60_000;
const backMs = 90 * 86_400_000;
const storeOnly = ['anonymous_id', 'idempotency_key', 'occurred_at', 'start_flows'] as const;

function refuse(errors: FieldError[]) {
  const error = validationError(422, undefined, errors[0]!.message);
  error.options.errors = errors;
  return error;
}

const optionalText = (value: unknown, path: string, max: number): string | null => {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) throw validationError(422, path, `\`${path}\` must be a string of 1-${max} characters.`);
  return value;
};

function checkOccurredAt(raw: unknown, now: Date): Date {
  if (raw === undefined || raw === null) return now;
  const at = typeof raw === 'string' ? readIsoInstant(raw) : undefined;
  if (!at) throw validationError(422, 'occurred_at', '`occurred_at` must be an ISO 8601 date and time with a zone.');
  if (at.getTime() > now.getTime() + aheadMs) throw validationError(422, 'occurred_at', '`occurred_at` is at most 5 minutes ahead.');
  if (at.getTime() < now.getTime() - backMs) throw validationError(422, 'occurred_at', '`occurred_at` is at most 90 days back.');
  return at;
}

export function checkSend(input: SendEventInput, now: Date): CheckedSend {
  if (input.event === undefined || input.event === null) throw missingField('event');
  if (typeof input.event !== 'string' || input.event.length === 0) throw validationError(422, 'event', '`event` must be an event name.');
  const name = input.event;
  const store = isStoreEvent(name);
  if (!store) {
    const sent = storeOnly.filter((k) => input[k] !== undefined);
    if (sent.length) throw refuse(sent.map((k) => ({ path: k, message: `\`${k}\` is for store events only.` })));
  }
  const anonymousId = store ? optionalText(input.anonymous_id, 'anonymous_id', 200) : null;
  const given = [input.contact_id, input.email].filter((v) => v !== undefined && v !== null).length;
  if (given > 1 || (given === 0 && anonymousId === null)) {
    throw validationError(422, 'contact_id', 'Send exactly one of `contact_id` or `email`.');
  }
  if (input.contact_id !== undefined && input.contact_id !== null && typeof input.contact_id !== 'string') throw validationError(422, 'contact_id', '`contact_id` must be a contact id.');
  if (input.email !== undefined && input.email !== null && typeof input.email !== 'string') throw validationError(422, 'email', '`email` must be an address.');
  const payload = input.payload ?? {};
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw validationError(422, 'payload', '`payload` must be an object.');
  if (Buffer.byteLength(JSON.stringify(payload)) > PAYLOAD_BYTES_MAX) throw validationError(422, 'payload', 'The `payload` is at most 16 KB of JSON.');
  if (input.start_flows !== undefined && typeof input.start_flows !== 'boolean') throw validationError(422, 'start_flows', '`start_flows` must be a boolean.');
  const body = payload as Record<string, unknown>;
  return {
    name, store, payload: body, anonymousId,
    contactId: typeof input.contact_id === 'string' ? input.contact_id : null,
    email: typeof input.email === 'string' ? input.email : null,
    contactGiven: given === 1,
    idempotencyKey: store ? optionalText(input.idempotency_key, 'idempotency_key', 256) : null,
    occurredAt: store ? checkOccurredAt(input.occurred_at, now) : now,
    startFlows: input.start_flows !== false,
    checkPayload(schema) {
      const errors = store ? storePayloadProblems(body) : payloadProblems(body, schema);
      if (errors.length) throw refuse(errors);
    },
  };
}

/** The contact the send names (404 when the team has none), or the browser's, or none yet. */
export async function resolveContact(trx: Db, teamId: string, send: CheckedSend): Promise<string | undefined> {
  const contacts = contactsRepo(trx);
  if (send.contactId !== null) {
    const row = looksLikeId(send.contactId) ? await contacts.byId(teamId, send.contactId.toLowerCase()) : undefined;
    if (!row) throw notFound('Contact');
    return row.id;
  }
  if (send.email !== null) {
    const row = await contacts.byEmailKey(teamId, emailKeyOf(send.email));
    if (!row) throw notFound('Contact');
    return row.id;
  }
  return customEventsRepo(trx).browserContact(teamId, send.anonymousId!);
}
