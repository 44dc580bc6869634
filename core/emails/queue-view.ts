import type { EmailAttachmentRow, EmailAttemptRow, EmailRecipientRow, EmailRow, QueueCountRow, QueueListRow } from '../../storage/repos/index.js';

// What the operator's queue tools answer (svc admin queue …, as JSON on the admin socket), in the
// queue states of core/queue-words.ts.

import { queueStates, type QueueState } from '../queue-words.js';
export { queueStates, type QueueState, durationMs } from '../queue-words.js';
export type QueueCounts = Record<QueueState, number> & { total: number };

/** A recipient's state as the queue tools show it. */
export const queueStateOf = (row: Pick<EmailRecipientRow, 'state' | 'attempts'>): string =>
  (row.state === 'queued' && row.attempts > 0 ? 'deferred' : row.state);

export interface QueueGroup {
  region: string;
  /** The destination (the recipients' domain); absent on a region's line. */
  domain?: string;
  counts: QueueCounts;
  /** Acceptance time of the oldest email still waiting. */
  oldest_at: string | null;
  /** The soonest next attempt of a queued or deferred recipient. */
  next_attempt_at: string | null;
}

export interface QueueSummary {
  object: 'queue_summary';
  generated_at: string;
  totals: QueueCounts;
  regions: QueueGroup[];
  /** Destinations with the most recipients waiting first, at most `limit` of them. */
  destinations: QueueGroup[];
  destinations_total: number;
}

const emptyCounts = (): QueueCounts => ({ scheduled: 0, queued: 0, deferred: 0, held: 0, submitting: 0, ambiguous: 0, total: 0 });
const earliest = (a: string | null, b: string | null) => (!a ? b : !b ? a : a < b ? a : b);

function add(group: QueueGroup, row: QueueCountRow): void {
  if (row.state === 'queued') {
    group.counts.queued += row.count - row.retried;
    group.counts.deferred += row.retried;
    group.next_attempt_at = earliest(group.next_attempt_at, row.next_attempt_at);
  } else if (row.state in group.counts) {
    group.counts[row.state as QueueState] += row.count;
  }
  group.counts.total += row.count;
  group.oldest_at = earliest(group.oldest_at, row.oldest);
}

/** The grouped counts, folded per region and per (region, destination). */
export function queueSummary(rows: readonly QueueCountRow[], now: string, limit: number): QueueSummary {
  const totals: QueueGroup = { region: 'all', counts: emptyCounts(), oldest_at: null, next_attempt_at: null };
  const regions = new Map<string, QueueGroup>();
  const destinations = new Map<string, QueueGroup>();
  for (const row of rows) {
    add(totals, row);
    const region = regions.get(row.region) ?? { region: row.region, counts: emptyCounts(), oldest_at: null, next_attempt_at: null };
    regions.set(row.region, region);
    add(region, row);
    const key = `${row.region} ${row.domain}`;
    const destination = destinations.get(key)
      ?? { region: row.region, domain: row.domain, counts: emptyCounts(), oldest_at: null, next_attempt_at: null };
    destinations.set(key, destination);
    add(destination, row);
  }
  const busiest = [...destinations.values()].sort((a, b) => b.counts.total - a.counts.total || a.domain!.localeCompare(b.domain!));
  return {
    object: 'queue_summary', generated_at: now, totals: totals.counts,
    regions: [...regions.values()].sort((a, b) => a.region.localeCompare(b.region)),
    destinations: busiest.slice(0, limit), destinations_total: busiest.length,
  };
}

/** One recipient waiting in the queue, as `svc admin queue list` shows it. */
export interface QueueEntry {
  object: 'queue_entry';
  email_id: string;
  recipient_id: string;
  team_id: string;
  region: string;
  state: string;
  address: string;
  domain: string;
  from: string;
  subject: string;
  accepted_at: string;
  attempts: number;
  next_attempt_at: string | null;
  expires_at: string | null;
  last_response: string | null;
}

export function queueEntry(row: QueueListRow): QueueEntry {
  return {
    object: 'queue_entry', email_id: row.email_id, recipient_id: row.id, team_id: row.team_id, region: row.region,
    state: queueStateOf(row), address: row.address, domain: row.domain, from: row.from_email, subject: row.subject,
    accepted_at: row.created_at, attempts: row.attempts, next_attempt_at: row.next_attempt_at, expires_at: row.expires_at,
    last_response: row.last_response,
  };
}

export interface AttemptView {
  attempt: number;
  at: string;
  outcome: string;
  reply: string;
  relay: string | null;
}

export interface QueuedRecipientView {
  id: string;
  address: string;
  kind: string;
  state: string;
  attempts: number;
  first_attempt_at: string | null;
  next_attempt_at: string | null;
  expires_at: string | null;
  last_response: string | null;
  bounce: { type: string; sub_type: string | null } | null;
  history: AttemptView[];
}

/** `svc admin queue show`: the envelope, each recipient with its attempts, the headers; the body only when asked. */
export interface QueuedEmailView {
  object: 'queued_email';
  id: string;
  team_id: string;
  region: string;
  /** The email's own status (scheduled | dispatched | canceled) and its latest lifecycle name. */
  status: string;
  last_event: string;
  accepted_at: string;
  scheduled_at: string | null;
  /** Each recipient is its own SMTP transaction from a signed per-recipient return path. */
  envelope: { from: string; recipients: string[] };
  recipients: QueuedRecipientView[];
  headers: { name: string; value: string }[];
  attachments: number;
  body?: { html: string | null; text: string | null; attachments: { filename: string | null; content_type: string; size: number }[] };
}

const headerList = (json: string | null) => (json ? (JSON.parse(json) as { header: string }[]).map((m) => m.header).join(', ') : '');

/** The headers svc writes from the stored email (the MIME framing and DKIM are added when sending). */
function headersOf(email: EmailRow): { name: string; value: string }[] {
  const headers = [
    { name: 'From', value: email.from_header }, { name: 'To', value: headerList(email.to_json) },
    { name: 'Cc', value: headerList(email.cc_json) }, { name: 'Reply-To', value: headerList(email.reply_to_json) },
    { name: 'Subject', value: email.subject }, { name: 'Message-ID', value: email.message_id },
  ].filter((h) => h.value);
  const custom = email.headers_json ? Object.entries(JSON.parse(email.headers_json) as Record<string, string>) : [];
  return [...headers, ...custom.map(([name, value]) => ({ name, value: String(value) }))];
}

export interface ShowParts {
  email: EmailRow;
  recipients: EmailRecipientRow[];
  attempts: EmailAttemptRow[];
  attachments?: EmailAttachmentRow[];
}

export function queuedEmailView(parts: ShowParts): QueuedEmailView {
  const { email } = parts;
  const view: QueuedEmailView = {
    object: 'queued_email', id: email.id, team_id: email.team_id, region: email.region, status: email.status,
    last_event: email.last_event, accepted_at: email.created_at, scheduled_at: email.scheduled_at,
    envelope: { from: email.from_email, recipients: parts.recipients.map((r) => r.address) },
    recipients: parts.recipients.map((r) => ({
      id: r.id, address: r.address, kind: r.kind, state: queueStateOf(r), attempts: r.attempts,
      first_attempt_at: r.first_attempt_at, next_attempt_at: r.next_attempt_at, expires_at: r.expires_at, last_response: r.last_response,
      bounce: r.bounce_type ? { type: r.bounce_type, sub_type: r.bounce_sub_type } : null,
      history: parts.attempts.filter((a) => a.recipient_id === r.id)
        .map((a) => ({ attempt: a.attempt, at: a.at, outcome: a.outcome, reply: a.reply, relay: a.relay })),
    })),
    headers: headersOf(email), attachments: email.attachment_count,
  };
  if (parts.attachments) {
    view.body = {
      html: email.html, text: email.text,
      attachments: parts.attachments.map((a) => ({ filename: a.filename, content_type: a.content_type, size: a.size })),
    };
  }
  return view;
}
