import type { Db } from '../../storage/sql/index.js';
import { eventsRepo, teamListensTo, type EventsRepo, type PlatformEventsRepo } from '../../storage/repos/index.js';
import { newId } from '../ids.js';
import { platformEmailEventTypes } from './email-events.js';

export { emitEmailEvent, platformEmailEventTypes, type EmailEventSource, type EmailEventType, type PlatformEmailEventType } from './email-events.js';

// The outbox: the spec's subscribable event types (Events) and the one way to write them, in the
// transaction of the change they report. (Custom events, spec document 2, are another thing.)
// The spec's subscribable event types (Events). A closed list: webhooks refuse any other name.
export const eventTypes = [
  'email.sent', 'email.scheduled', 'email.delivered', 'email.delivery_delayed', 'email.bounced',
  'email.complained', 'email.opened', 'email.clicked', 'email.failed', 'email.suppressed',
  'email.canceled', 'domain.created', 'domain.updated', 'domain.deleted', 'suppression.added',
  'suppression.removed', 'contact.created', 'contact.updated', 'contact.deleted', 'email.received',
  'automation.run.started', 'automation.run.completed', 'automation.run.failed',
  'inbox.conversation.created', 'inbox.message.received', 'inbox.reply.sent', 'inbox.note.created',
  'inbox.conversation.assigned', 'inbox.conversation.status_changed',
] as const;

export type EventType = (typeof eventTypes)[number];

export const isEventType = (value: string): value is EventType => (eventTypes as readonly string[]).includes(value);

/** Writes one event to the outbox; `events` must be bound to the caller's transaction. */
export async function emitEvent(events: EventsRepo, teamId: string, type: EventType, data: Record<string, unknown>, at: Date): Promise<string> {
  const id = newId();
  await events.insert({ id, team_id: teamId, type, created_at: at.toISOString(), data: JSON.stringify(data) });
  return id;
}

/**
 * Writes an event that only webhook endpoints read (no metric, allowance or timeline counts it),
 * and only when an enabled endpoint of the team subscribes to its type; `data` is built only then.
 * For the streams written once per automation run: 100,000 runs woken at once spent a third of
 * their time writing, and then fanning out and folding, events that no endpoint wanted. An
 * endpoint only receives events written after it was created (its `from_seq`), so one that did not
 * exist when the event's transaction ran would not have received it anyway.
 */
export async function emitListenedEvent(trx: Db, teamId: string, type: EventType, data: () => Record<string, unknown>, at: Date): Promise<string | undefined> {
  if (!(await teamListensTo(trx, teamId, type))) return undefined;
  return emitEvent(eventsRepo(trx), teamId, type, data(), at);
}

/**
 * Platform events: the internal stream automations are started by (spec Events, the reserved
 * `svc:` prefix). Not webhooks: they never reach an endpoint. A closed list: the audience's own,
 * and the `svc:email.*` family a mail lifecycle event writes (email-events.ts).
 */
export const platformEventTypes = [
  'svc:contact.created', 'svc:topic.subscribed', 'svc:topic.unsubscribed', 'svc:segment.entered', ...platformEmailEventTypes,
] as const;

export type PlatformEventType = (typeof platformEventTypes)[number];

/** Writes one platform event; `events` must be bound to the caller's transaction. */
export async function emitPlatformEvent(
  events: PlatformEventsRepo, teamId: string, type: PlatformEventType, contactId: string | null, data: Record<string, unknown>, at: Date,
): Promise<string> {
  const id = newId();
  await events.insert({ id, team_id: teamId, type, contact_id: contactId, data: JSON.stringify(data), created_at: at.toISOString() });
  return id;
}
