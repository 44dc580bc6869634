import type { Db } from '../../storage/sql/index.js';
import { contactsRepo, eventsRepo, platformEventsRepo, teamAutomationsActOn, type EmailRow } from '../../storage/repos/index.js';
import { newId } from '../ids.js';
import type { EventType } from './index.js';

// A mail lifecycle event (email.sent, email.delivered, …) is written here: its outbox row for
// webhooks and, in the same transaction, the matching `svc:email.*` platform event for each
// recipient who is a contact of the team (by address, ignoring case), which the platform stream
// reader enrols into automations. So a crash loses or doubles neither.
//
// The cost stays off the outbound hot path: the event names a team's automations act on (enabled
// triggers, and exit events) are read once per transaction (the delivery recorder's group commit
// writes many outcomes in one), and only a team with an automation starting or exiting on this
// very event pays a contact lookup. Read in the transaction, never cached across it: an
// automation enabled a moment ago (in any process) sees the next event.

/** The `svc:email.*` family automations may start on: the lifecycle of mail sent to a contact. */
export const platformEmailEventTypes = [
  'svc:email.sent', 'svc:email.delivered', 'svc:email.delivery_delayed', 'svc:email.bounced', 'svc:email.complained',
  'svc:email.opened', 'svc:email.clicked', 'svc:email.failed', 'svc:email.suppressed',
] as const;

export type PlatformEmailEventType = (typeof platformEmailEventTypes)[number];

/** What of the email a lifecycle event reads: its id, team, recipients and origin. */
export type EmailEventSource = Pick<EmailRow, 'id' | 'team_id' | 'recipients_text' | 'broadcast_id' | 'automation_id' | 'automation_run_id' | 'automation_chain'>;

/** The email.* webhook events. */
export type EmailEventType = Extract<EventType, `email.${string}`>;

/**
 * Writes one email.* event to the outbox and, for contacts among its recipients, its `svc:email.*`
 * platform event when an automation of the team starts or exits on it. `trx` must be the caller's
 * transaction: the read of what the team's automations act on is kept for the transaction's life.
 * Per-recipient events name their recipient in `data.to`; the others (email.sent) concern every
 * recipient of the email.
 */
export async function emitEmailEvent(trx: Db, email: EmailEventSource, type: EmailEventType, data: Record<string, unknown>, at: Date): Promise<string> {
  const id = newId();
  await eventsRepo(trx).insert({ id, team_id: email.team_id, type, created_at: at.toISOString(), data: JSON.stringify(data) });
  const platformType = `svc:${type}`;
  if (!(platformEmailEventTypes as readonly string[]).includes(platformType)) return id;
  if (!(await teamAutomationsActOn(trx, email.team_id, platformType))) return id;
  const addresses = type === 'email.sent' ? email.recipients_text.split(' ') : (data.to as string[]).map((a) => a.toLowerCase());
  const contacts = await contactsRepo(trx).idsByEmailKeys(email.team_id, [...new Set(addresses.filter((a) => a !== ''))]);
  const events = platformEventsRepo(trx);
  for (const contact of contacts.sort((a, b) => a.id.localeCompare(b.id))) {
    await events.insert({
      id: newId(), team_id: email.team_id, type: platformType, contact_id: contact.id,
      data: JSON.stringify(contactEventData(email, data, contact)), created_at: at.toISOString(),
    });
  }
  return id;
}

/**
 * The platform event's data: the webhook envelope (subject, from, tags, broadcast_id, the event's
 * own object) without the custom headers, for this one contact, with the automation that sent the
 * email and flat keys a template or condition reads easily (`link` of a click, `bounce_type`).
 */
function contactEventData(email: EmailEventSource, data: Record<string, unknown>, contact: { id: string; email_key: string }): Record<string, unknown> {
  const { headers: _headers, to: _to, ...envelope } = data;
  const out: Record<string, unknown> = { ...envelope, contact_id: contact.id, email_id: email.id, to: contact.email_key };
  if (email.automation_id) {
    out.automation_id = email.automation_id;
    out.automation_run_id = email.automation_run_id ?? null;
    out.automation_chain = email.automation_chain ? JSON.parse(email.automation_chain) as string[] : [email.automation_id];
  }
  const click = data.click as { link?: unknown } | undefined;
  if (typeof click?.link === 'string') out.link = click.link;
  const bounce = data.bounce as { type?: unknown; subType?: unknown } | undefined;
  if (bounce) {
    out.bounce_type = bounce.type;
    out.bounce_sub_type = bounce.subType;
  }
  return out;
}
