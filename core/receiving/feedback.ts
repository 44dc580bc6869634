import type { Db } from '../../storage/sql/index.js';
import { receivedRepo, type ReceivedReportRow } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { VerpChecker, VerpTarget } from './ports.js';
import type { Bounce, ComplaintReport, Delay, DeliveryReport, DsnFinding } from './reports.js';

// Recording the reports that come back for mail svc sent. A report affects exactly one recipient:
// the one its signed return path names. A DSN is sent to that return path (checked at RCPT); a
// complaint names it as a trace field of the returned message (its Return-Path, or the report's
// Original-Mail-From), checked here. Anything a reader of one message can see — its Message-ID,
// the other recipients' addresses — is never enough to act on someone: a recipient can only ever
// report about themselves. What the report means is recorded against that recipient through the
// sending side (FeedbackSink): a permanent failure is email.bounced and a bounce suppression, a
// delay email.delivery_delayed, a complaint email.complained and a complaint suppression. Any
// report naming a recipient whose submission is ambiguous (the DATA terminator went out, no reply
// came) settles it: the remote side evidently had the message.

export interface FeedbackRecipient {
  recipientId: string;
  emailId: string;
  teamId: string;
  address: string;
}

/** The sending side's recording, by recipient (core/emails/delivery.ts behind it). */
export interface FeedbackSink {
  recipient(recipientId: string): Promise<FeedbackRecipient | undefined>;
  bounce(recipientId: string, bounce: Bounce, response: string): Promise<boolean>;
  /** Settles an ambiguous submission (the remote side had it) and writes email.delivery_delayed. */
  delay(recipientId: string, delay: Delay, response: string): Promise<boolean>;
  /** Settles an ambiguous submission as delivered; a no-op for any other state. */
  delivered(recipientId: string, response: string): Promise<boolean>;
  complaint(recipientId: string): Promise<boolean>;
}

export interface FeedbackDeps {
  db: Db;
  sink: FeedbackSink;
  returnPaths: VerpChecker;
  clock: Clock;
  logger: Logger;
}

type Outcome = ReceivedReportRow['outcome'];

/** Records a DSN that came to a VERP return path; answers the id of the report record. */
export async function recordDsn(deps: FeedbackDeps, sentTo: VerpTarget, report: DeliveryReport | undefined): Promise<string> {
  if (!report) return writeReport(deps, 'dsn', undefined, 'unparsed', { sent_to: sentTo.recipientId });
  const target = await deps.sink.recipient(sentTo.recipientId);
  if (!target) return writeReport(deps, 'dsn', undefined, 'unmatched', { sent_to: sentTo.recipientId });
  const finding = pickFinding(report.findings, target.address);
  const decision = finding.decision;
  let outcome: Outcome;
  switch (decision.action) {
    case 'bounced':
      await deps.sink.bounce(target.recipientId, decision.bounce, decision.response);
      outcome = 'bounced';
      break;
    case 'delayed':
      await deps.sink.delay(target.recipientId, { ...decision.delay, delayedRecipients: [target.address] }, decision.response);
      outcome = 'delayed';
      break;
    case 'delivered':
      await deps.sink.delivered(target.recipientId, decision.response);
      outcome = 'delivered';
  }
  deps.logger.info({ emailId: target.emailId, recipientId: target.recipientId, outcome, status: finding.status }, 'delivery status notification recorded');
  return writeReport(deps, 'dsn', target, outcome, { format: report.format, status: finding.status, diagnostic_code: finding.diagnosticCode, reporting_mta: report.reportingMta });
}

/** Records a complaint report sent to the feedback address. */
export async function recordComplaint(deps: FeedbackDeps, report: ComplaintReport | undefined): Promise<string> {
  if (!report) return writeReport(deps, 'arf', undefined, 'unparsed', {});
  const target = await findComplaintTarget(deps, report);
  if (!target) return writeReport(deps, 'arf', undefined, 'unmatched', {});
  await deps.sink.complaint(target.recipientId);
  deps.logger.info({ emailId: target.emailId, recipientId: target.recipientId, feedbackType: report.feedbackType }, 'complaint recorded');
  return writeReport(deps, 'arf', target, 'complained', { feedback_type: report.feedbackType, user_agent: report.userAgent, source_ip: report.sourceIp });
}

/** The recipient whose signed return path the complaint's returned message carries. */
async function findComplaintTarget(deps: FeedbackDeps, report: ComplaintReport): Promise<FeedbackRecipient | undefined> {
  for (const candidate of [report.original?.headers['return-path'], report.originalMailFrom]) {
    const address = candidate?.match(/[^<>\s,;]+@[^<>\s,;]+/)?.[0];
    const verp = address ? await deps.returnPaths(address) : undefined;
    const found = verp?.ok && (await deps.sink.recipient(verp.recipientId));
    if (found) return found;
  }
  return undefined;
}

/** The block about this recipient when there is one; a failure outranks a delay outranks success. */
function pickFinding(findings: DsnFinding[], address: string): DsnFinding {
  const mine = findings.filter((f) => f.recipient === address.toLowerCase());
  const pool = mine.length > 0 ? mine : findings;
  const rank = { bounced: 0, delayed: 1, delivered: 2 } as const;
  return [...pool].sort((a, b) => rank[a.decision.action] - rank[b.decision.action])[0]!;
}

async function writeReport(deps: FeedbackDeps, kind: 'dsn' | 'arf', target: FeedbackRecipient | undefined, outcome: Outcome, detail: Record<string, unknown>): Promise<string> {
  const id = newId();
  await receivedRepo(deps.db).insertReport({
    id, kind, created_at: deps.clock.now().toISOString(), team_id: target?.teamId ?? null, email_id: target?.emailId ?? null,
    recipient: target?.address ?? null, outcome, detail_json: JSON.stringify(detail),
  });
  if (outcome === 'unmatched' || outcome === 'unparsed') deps.logger.warn({ reportId: id, kind, outcome }, 'report not recorded against an email');
  return id;
}
