import type { Db } from '../../storage/sql/index.js';
import { emailsRepo, type AcceptedEmail } from '../../storage/repos/index.js';
import type { EmailRecipientRow, EmailRow } from '../../storage/repos/index.js';
import { emitEmailEvent, type EmailEventType } from '../outbox/index.js';
import { newId } from '../ids.js';
import type { Region } from '../regions.js';
import { addressKey } from './addresses.js';
import { envelopeData } from './envelope.js';
import type { RecipientFate } from './recipients.js';
import type { AttachmentPart, NormalisedSend } from './types.js';
import { hasUnsubscribe } from './validate.js';
import { contentHash } from './bulk.js';
import type { SendingDomain } from './ports.js';

/** One email ready to commit: its rows and the events its acceptance writes. */
export interface PreparedEmail extends AcceptedEmail {
  events: { type: EmailEventType; data: Record<string, unknown> }[];
  bulkWarning?: { contentHash: string; day: string };
  /** Has recipients due now: the outbound queue should look. */
  dueNow: boolean;
}

export interface PrepareInput {
  teamId: string;
  apiKeyId: string | null;
  send: NormalisedSend;
  domain: SendingDomain;
  region: Region;
  fates: RecipientFate[];
  attachments: AttachmentPart[];
  now: Date;
}

const mailboxJson = (list: NormalisedSend['to']) => (list.length ? JSON.stringify(list.map((m) => ({ header: m.header, address: m.address }))) : null);

export function prepareEmail(input: PrepareInput): PreparedEmail {
  const { send, now } = input;
  const id = newId();
  const at = now.toISOString();
  const scheduled = send.scheduledAt !== null;
  const deliverable = input.fates.filter((f) => f.kind === 'deliver').length;
  const unsubscribes = hasUnsubscribe(send);
  const email: EmailRow = {
    id, team_id: input.teamId, api_key_id: input.apiKeyId, domain_id: input.domain.id, region: input.region.name,
    from_header: send.from.header, from_email: addressKey(send.from.address),
    to_json: mailboxJson(send.to)!, cc_json: mailboxJson(send.cc), bcc_json: mailboxJson(send.bcc), reply_to_json: mailboxJson(send.replyTo),
    subject: send.subject, html: send.html, text: send.text,
    headers_json: send.headers ? JSON.stringify(send.headers) : null,
    tags_json: send.tags ? JSON.stringify(send.tags) : null,
    topic_id: send.topicId, template_id: send.template?.id ?? null, template_version: send.template?.versionId ?? null,
    message_id: `<${id}@${send.from.domain}>`,
    scheduled_at: send.scheduledAt,
    status: scheduled ? 'scheduled' : 'dispatched',
    last_event: scheduled ? 'scheduled' : deliverable > 0 ? 'queued' : 'suppressed',
    recipients_text: send.recipients.map((r) => addressKey(r.address)).join(' '),
    recipient_count: send.recipients.length,
    // Rule 5 counts only mail without an unsubscribe (bulk.ts): no digest for mail that has one, a
    // broadcast's personalised page of 4 KB messages above all.
    content_hash: unsubscribes ? '' : contentHash(send.subject, send.html, send.text),
    has_unsubscribe: unsubscribes ? 1 : 0,
    attachment_count: input.attachments.length,
    created_at: at, updated_at: at,
  };
  const recipients = send.recipients.map((r, idx): EmailRecipientRow => {
    const fate = input.fates[idx]!;
    const state = fate.kind !== 'deliver' ? 'suppressed' : scheduled ? 'scheduled' : 'queued';
    return {
      id: `${id}.${idx}`, email_id: id, team_id: input.teamId, region: input.region.name, idx,
      address: addressKey(r.address), domain: r.domain, kind: r.kind, state,
      attempts: 0, next_attempt_at: state === 'queued' ? at : state === 'scheduled' ? send.scheduledAt : null,
      first_attempt_at: null, submitted_at: null, expires_at: null, last_response: null,
      bounce_type: null, bounce_sub_type: null, updated_at: at,
    };
  });
  return {
    email, recipients,
    tags: (send.tags ?? []).map((t) => ({ email_id: id, team_id: input.teamId, name: t.name, value: t.value })),
    attachments: input.attachments.map((a, idx) => ({
      id: newId(), email_id: id, team_id: input.teamId, idx, filename: a.filename, content_type: a.contentType,
      content_id: a.contentId, disposition: a.disposition, size: a.content.length, content: a.content,
    })),
    events: acceptanceEvents(email, recipients, input.fates),
    dueNow: !scheduled && deliverable > 0,
  };
}

function acceptanceEvents(email: EmailRow, recipients: EmailRecipientRow[], fates: RecipientFate[]): PreparedEmail['events'] {
  const events: PreparedEmail['events'] = [];
  if (email.status === 'scheduled') events.push({ type: 'email.scheduled', data: envelopeData(email) });
  fates.forEach((fate, i) => {
    if (fate.kind === 'deliver') return;
    const suppressed = fate.kind === 'invalid'
      ? { reason: 'invalid_recipient', type: 'Suppressed', message: `The recipient cannot receive mail (${fate.cause}).`, diagnosticCode: [] }
      : { reason: fate.origin, type: 'OnAccountSuppressionList', message: `The recipient is on the team's suppression list (${fate.origin}).`, diagnosticCode: [] };
    events.push({ type: 'email.suppressed', data: envelopeData(email, [recipients[i]!.address], { suppressed }) });
  });
  return events;
}

/**
 * Writes the accepted emails, their recipients, tags, attachments, events, bulk warnings and the
 * idempotent answer in ONE transaction: with synchronous=FULL the commit is on disk when this
 * resolves, which is what a 200 promises.
 */
export async function commitAccepted(trx: Db, prepared: PreparedEmail[], now: Date, extra?: (trx: Db) => Promise<void>): Promise<void> {
  const repo = emailsRepo(trx);
  await repo.insertAcceptedMany(prepared);
  for (const p of prepared) {
    for (const e of p.events) await emitEmailEvent(trx, p.email, e.type, e.data, now);
    if (p.bulkWarning) await repo.recordBulkWarning(p.email.team_id, p.bulkWarning.contentHash, p.bulkWarning.day, now.toISOString());
  }
  if (extra) await extra(trx);
}
