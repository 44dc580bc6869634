import type { Db } from '../../storage/sql/index.js';
import { consentRepo, contactsRepo, eventsRepo, platformEventsRepo, type ContactChange, type ContactRow } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { validationError } from '../errors.js';
import { newId } from '../ids.js';
import { emitEvent, emitPlatformEvent } from '../outbox/index.js';
import { applyTopicChoices } from './choices.js';
import { recordConsent, type ConsentContext, type ConsentHasher } from './consent.js';
import { checkContactLimit, type ContactLimitOf } from './limit.js';
import { emailKeyOf, requestedStatus, type ContactInput, type TopicChoiceInput } from './input.js';
import { mergeProperties } from './properties.js';
import { contactView } from './view.js';

// The writes of a contact, each inside the caller's transaction: the row, its properties, its
// consent records, its topic choices and its events commit together.

export interface WriteDeps {
  clock: Clock;
  hash: ConsentHasher;
  contactLimit: ContactLimitOf;
}

/** Checked input of a create: `email` present and well formed. */
export type CheckedCreate = ContactInput & { email: string; topics: TopicChoiceInput[] };

/**
 * Rule 1: a new address is created (contact.created); an existing one is updated with the fields
 * sent and keeps its id (contact.updated when something changed), and a repeat create never lifts
 * an opt-out. A contact added from sends is treated as new: the caller's status and a
 * contact.created event. Answers the contact's id.
 */
export async function createContact(trx: Db, deps: WriteDeps, teamId: string, input: CheckedCreate, context: ConsentContext): Promise<string> {
  const repo = contactsRepo(trx);
  const emailKey = emailKeyOf(input.email);
  const existing = await repo.byEmailKey(teamId, emailKey);
  if (existing && existing.origin !== 'sends') {
    // The address is how it was found: its spelling stays as first given.
    await updateContact(trx, deps, existing, { ...input, email: undefined }, context, 'repeat');
    await applyTopicChoices(trx, existing, input.topics, context, deps.hash, deps.clock.now());
    return existing.id;
  }
  await checkContactLimit(trx, teamId, deps.contactLimit);
  const now = deps.clock.now();
  const at = now.toISOString();
  const status = requestedStatus(input, undefined) ?? 'subscribed';
  const fields = {
    email: input.email, email_key: emailKey, first_name: input.first_name ?? null, last_name: input.last_name ?? null,
    subscription_status: status, origin: 'api' as const,
  };
  let row: ContactRow;
  if (existing) {
    row = { ...existing, ...fields, updated_at: at };
    await repo.update(teamId, existing.id, { ...fields, updated_at: at });
  } else {
    row = { id: newId(), team_id: teamId, ...fields, created_at: at, updated_at: at };
    // Another request created the address since the read: this one becomes its repeat.
    if (!(await repo.insertIfAbsent(row))) return createContact(trx, deps, teamId, input, context);
  }
  await mergeProperties(trx, teamId, row.id, input.properties, at);
  await recordConsent(trx, context, { teamId, contactId: row.id, emailHash: deps.hash(emailKey), kind: 'subscription', value: status, at });
  await emitEvent(eventsRepo(trx), teamId, 'contact.created', await eventData(trx, row), now);
  await emitPlatformEvent(platformEventsRepo(trx), teamId, 'svc:contact.created', row.id, { contact_id: row.id }, now);
  await applyTopicChoices(trx, row, input.topics, context, deps.hash, now);
  return row.id;
}

/**
 * PATCH (or a repeat create): touches only what is sent. `never_subscribed` is accepted only for
 * a contact that already is; a repeat create leaves an opt-out as it is. Writes a consent record
 * when the status changes and contact.updated when a field or property changed.
 */
export async function updateContact(trx: Db, deps: WriteDeps, contact: ContactRow, input: ContactInput, context: ConsentContext, mode: 'patch' | 'repeat'): Promise<void> {
  const now = deps.clock.now();
  const at = now.toISOString();
  const change: ContactChange = { updated_at: at };
  if (input.email !== undefined && input.email !== contact.email) await changeEmail(trx, contact, input.email, change);
  if (input.first_name !== undefined && input.first_name !== contact.first_name) change.first_name = input.first_name;
  if (input.last_name !== undefined && input.last_name !== contact.last_name) change.last_name = input.last_name;
  const status = nextStatus(contact, input, mode);
  if (status !== contact.subscription_status) change.subscription_status = status;
  const propertiesChanged = await mergeProperties(trx, contact.team_id, contact.id, input.properties, at);
  const fieldsChanged = Object.keys(change).length > 1;
  if (!fieldsChanged && !propertiesChanged) return;
  const row: ContactRow = { ...contact, ...change };
  await contactsRepo(trx).update(contact.team_id, contact.id, change);
  if (change.subscription_status !== undefined) {
    await recordConsent(trx, context, { teamId: contact.team_id, contactId: contact.id, emailHash: deps.hash(row.email_key), kind: 'subscription', value: status, at });
  }
  await emitEvent(eventsRepo(trx), contact.team_id, 'contact.updated', await eventData(trx, row), now);
}

/**
 * Rule 3: the contact, its property values and topic choices are deleted; its consent records
 * keep only the address hash, and an erasure record is added under it (which also keeps the
 * address from being added back from sends). contact.deleted carries the contact as it was.
 */
export async function eraseContact(trx: Db, deps: WriteDeps, contact: ContactRow, context: ConsentContext): Promise<void> {
  const now = deps.clock.now();
  const asItWas = await eventData(trx, contact);
  if (!(await contactsRepo(trx).erase(contact.team_id, contact.id))) return;
  await consentRepo(trx).detachContact(contact.team_id, contact.id);
  await recordConsent(trx, context, { teamId: contact.team_id, contactId: null, emailHash: deps.hash(contact.email_key), kind: 'erasure', value: 'erased', at: now.toISOString() });
  await emitEvent(eventsRepo(trx), contact.team_id, 'contact.deleted', asItWas, now);
}

async function changeEmail(trx: Db, contact: ContactRow, email: string, change: ContactChange): Promise<void> {
  const emailKey = emailKeyOf(email);
  if (emailKey !== contact.email_key) {
    const other = await contactsRepo(trx).byEmailKey(contact.team_id, emailKey);
    if (other) throw validationError(422, 'email', 'The address belongs to another contact.');
  }
  change.email = email;
  change.email_key = emailKey;
}

function nextStatus(contact: ContactRow, input: ContactInput, mode: 'patch' | 'repeat') {
  const current = contact.subscription_status;
  const requested = requestedStatus(input, current) ?? current;
  if (requested === 'never_subscribed' && current !== 'never_subscribed') {
    throw validationError(422, 'subscription_status', '`never_subscribed` is accepted only for a contact that already is.');
  }
  // Rule 1: a repeat create never resubscribes someone who opted out.
  if (mode === 'repeat' && current === 'unsubscribed') return current;
  return requested;
}

/** The data of contact.* events: the contact's wire shape. */
const eventData = async (trx: Db, row: ContactRow) => ({ ...(await contactView(trx, row)) }) as unknown as Record<string, unknown>;
