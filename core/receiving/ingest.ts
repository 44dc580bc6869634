import type { Db } from '../../storage/sql/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { receivedRepo, type DroppedReason, type ReceivedAttachmentRow, type ReceivedEmailRow, type ScanStatus } from '../../storage/repos/index.js';
import { receivedRawKey } from '../../storage/files/index.js';
import { teamsRepo } from '../../storage/repos/index.js';
import { emitEvent } from '../outbox/index.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { GroupCommit } from '../../storage/sql/index.js';
import { ParseFailed, parseMessage, type ParsedMessage } from './message.js';
import type { ReceivingLimits } from './ports.js';
import type { RecipientRoute } from './routing.js';

// Storing a received message: one record per team the envelope named, each with the team's own
// addresses in received_for. A record is either kept (bodies, attachments, raw source) or dropped
// with the spec's reason (html/text null, no attachments; the raw source kept only for
// parse_failed). Everything a team sees commits in one transaction with its email.received event.
// The raw file is not core's: the inbound listener owns it from the spool to the commit
// (mta/inbound/data.ts, commit.ts) and gives it the names of the records planned here.

export type ReceivedRoute = Extract<RecipientRoute, { kind: 'received' }>;

export interface ScanOutcome {
  status: ScanStatus;
  signature: string | null;
}

export interface IncomingMessage {
  raw: Buffer;
  receivedAt: Date;
  envelopeFrom: string;
  clientIp: string;
  clientHelo: string;
  routes: readonly ReceivedRoute[];
  scan: ScanOutcome;
  /** SPF/DKIM/DMARC/ARC verdicts, kept with the message. */
  auth: Record<string, unknown> | null;
}

export interface StoredRecord {
  id: string;
  teamId: string;
  droppedReason: DroppedReason | null;
  /** Whether the record keeps its raw source (receivedRawKey(id)); otherwise that name can go. */
  rawKept: boolean;
}

/** One record a message becomes: a team and the record's id (the raw file's name for it). */
export interface ReceivedPlan {
  group: TeamGroup;
  id: string;
}

/** The records a message becomes, one per team; the first takes `plannedId` when the file has it. */
export function planReceived(routes: readonly ReceivedRoute[], plannedId?: string): ReceivedPlan[] {
  return groupByTeam(routes).map((group, i) => ({ group, id: i === 0 && plannedId ? plannedId : newId() }));
}

export interface IngestDeps {
  db: Db;
  /**
   * Group commit: the records of messages finishing in the same event-loop turn share one
   * transaction (one fsync), and each SMTP session gets its 250 once that transaction is on disk.
   */
  commits: GroupCommit;
  limits: ReceivingLimits;
  logger: Logger;
}

export interface TeamGroup {
  teamId: string;
  domainId: string;
  claimed: string[];
  all: string[];
}

/**
 * Writes the planned records in one group-committed transaction; throws (and writes nothing) when
 * the database refuses. Every planned name must already exist in the spool.
 */
export async function storeReceived(deps: IngestDeps, message: IncomingMessage, plans: readonly ReceivedPlan[]): Promise<StoredRecord[]> {
  const parsed = await parseOrNull(message.raw);
  const stored = await deps.commits.run(async (trx) => {
    const out: StoredRecord[] = [];
    for (const plan of plans) out.push(await storeForTeam(deps, trx, message, parsed, plan));
    return out;
  });
  for (const record of stored) {
    deps.logger.info({ emailId: record.id, teamId: record.teamId, dropped: record.droppedReason, size: message.raw.length }, 'received message stored');
  }
  return stored;
}

async function parseOrNull(raw: Buffer): Promise<ParsedMessage | null> {
  try {
    return await parseMessage(raw);
  } catch (err) {
    if (err instanceof ParseFailed) return null;
    throw err;
  }
}

function groupByTeam(routes: readonly ReceivedRoute[]): TeamGroup[] {
  const groups = new Map<string, TeamGroup>();
  for (const route of routes) {
    const group = groups.get(route.domain.teamId) ?? { teamId: route.domain.teamId, domainId: route.domain.domainId, claimed: [], all: [] };
    groups.set(route.domain.teamId, group);
    const seen = (list: string[]) => list.some((a) => a.toLowerCase() === route.address.toLowerCase());
    if (!seen(group.all)) group.all.push(route.address);
    if (route.claimed && !seen(group.claimed)) group.claimed.push(route.address);
  }
  return [...groups.values()];
}

async function storeForTeam(
  deps: IngestDeps, trx: Db, message: IncomingMessage, parsed: ParsedMessage | null, plan: { group: TeamGroup; id: string },
): Promise<StoredRecord> {
  const { group, id } = plan;
  const reason = await droppedReason(deps, trx, message, parsed, group);
  const rawKept = reason === null || reason === 'parse_failed';
  const receivedFor = group.claimed.length > 0 ? group.claimed : group.all;
  const row = recordRow(id, message, parsed, group, receivedFor, reason, rawKept ? receivedRawKey(id) : null);
  const attachments = reason === null && parsed ? attachmentRows(id, group.teamId, parsed) : [];
  await receivedRepo(trx).insert(row, attachments);
  if (reason === null) {
    await emitEvent(eventsRepo(trx), group.teamId, 'email.received', receivedEventData(row, attachments), message.receivedAt);
  }
  return { id, teamId: group.teamId, droppedReason: reason, rawKept };
}

/** The spec's reasons, first match wins: the team, the content, the address, then the limits. */
async function droppedReason(
  deps: IngestDeps, trx: Db, message: IncomingMessage, parsed: ParsedMessage | null, group: TeamGroup,
): Promise<DroppedReason | null> {
  const team = await teamsRepo(trx).byId(group.teamId);
  if (!team || team.status !== 'active') return 'team_blocked';
  if (message.scan.status === 'infected') return 'virus';
  if (group.claimed.length === 0) return 'no_mailbox';
  if (!parsed) return 'parse_failed';
  const limits = await deps.limits.limitsFor(group.teamId);
  const repo = receivedRepo(trx);
  if (limits.dailyCap !== null) {
    const startOfDay = new Date(message.receivedAt);
    startOfDay.setUTCHours(0, 0, 0, 0);
    if ((await repo.keptSince(group.teamId, startOfDay.toISOString())) >= limits.dailyCap) return 'daily_cap';
  }
  if (limits.storageQuotaBytes !== null && (await repo.keptBytes(group.teamId)) + message.raw.length > limits.storageQuotaBytes) {
    return 'storage_quota';
  }
  return null;
}

function recordRow(
  id: string, message: IncomingMessage, parsed: ParsedMessage | null, group: TeamGroup, receivedFor: string[],
  reason: DroppedReason | null, rawKey: string | null,
): ReceivedEmailRow {
  const kept = reason === null;
  const searchable = parsed
    ? [parsed.subject, parsed.from.address, parsed.from.name, ...parsed.to, ...(parsed.cc ?? []), ...(parsed.bcc ?? []), ...receivedFor]
    : receivedFor;
  return {
    id,
    team_id: group.teamId,
    domain_id: group.domainId,
    created_at: message.receivedAt.toISOString(),
    message_id: parsed?.messageId ?? null,
    subject: parsed?.subject ?? '',
    from_text: parsed?.from.text ?? '',
    from_address: parsed?.from.address ?? '',
    from_name: parsed?.from.name ?? '',
    to_json: JSON.stringify(parsed?.to ?? []),
    cc_json: parsed?.cc ? JSON.stringify(parsed.cc) : null,
    bcc_json: parsed?.bcc ? JSON.stringify(parsed.bcc) : null,
    reply_to_json: parsed?.replyTo ? JSON.stringify(parsed.replyTo) : null,
    received_for_json: JSON.stringify(receivedFor),
    search_text: searchable.filter(Boolean).map((s) => s.toLowerCase()).join('\n'),
    headers_json: parsed ? JSON.stringify(parsed.headers) : null,
    html: kept ? (parsed?.html ?? null) : null,
    text: kept ? (parsed?.text ?? null) : null,
    dropped_reason: reason,
    raw_key: rawKey,
    raw_size: message.raw.length,
    envelope_from: message.envelopeFrom,
    client_ip: message.clientIp,
    client_helo: message.clientHelo,
    scan_status: message.scan.status,
    scan_signature: message.scan.signature,
    auth_json: message.auth ? JSON.stringify(message.auth) : null,
  };
}

function attachmentRows(emailId: string, teamId: string, parsed: ParsedMessage): ReceivedAttachmentRow[] {
  return parsed.attachments.map((a) => ({
    id: newId(), email_id: emailId, team_id: teamId, position: a.position, filename: a.filename, content_type: a.contentType,
    content_id: a.contentId, content_disposition: a.disposition, size: a.size, checksum: a.checksum,
  }));
}

/** `data` of email.received: the record's envelope fields and its attachments (no bodies). */
export function receivedEventData(row: ReceivedEmailRow, attachments: readonly ReceivedAttachmentRow[]): Record<string, unknown> {
  return {
    email_id: row.id,
    created_at: row.created_at,
    from: row.from_text,
    to: JSON.parse(row.to_json),
    cc: row.cc_json ? JSON.parse(row.cc_json) : [],
    bcc: row.bcc_json ? JSON.parse(row.bcc_json) : [],
    received_for: JSON.parse(row.received_for_json),
    message_id: row.message_id,
    subject: row.subject,
    attachments: attachments.map((a) => ({
      id: a.id, filename: a.filename, content_type: a.content_type, content_disposition: a.content_disposition, content_id: a.content_id, size: a.size,
    })),
  };
}
