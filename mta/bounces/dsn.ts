import type { Bounce, DeliveryReport, DsnDecision, DsnFinding } from '../../core/receiving/index.js';
import { addressField, fieldBlocks, partOfType, reportParts, returnedMessage, type ReportParts } from './dsn-mime.js';
import { classifyReply } from './rules.js';

// Delivery status notifications (RFC 3464). The per-recipient Action and Status decide; the
// Diagnostic-Code (the remote server's own reply) is classified with the same SMTP-reply rules as
// svc's own delivery attempts (./rules.ts), so a DSN and a direct refusal of the same mailbox say
// the same thing. A bounce without a delivery-status part (old qmail/Exim text bounces) is read
// from the first SMTP reply in its text, when it has one.

/** The report, or undefined when the message is not a DSN at all (e.g. an auto-reply). */
export async function parseDsn(raw: Buffer): Promise<DeliveryReport | undefined> {
  const report = await reportParts(raw);
  const status = partOfType(report.parts, 'message/delivery-status', 'message/global-delivery-status');
  if (status) return fromDeliveryStatus(report, status.content);
  return fromText(report);
}

async function fromDeliveryStatus(report: ReportParts, content: Buffer): Promise<DeliveryReport | undefined> {
  const [perMessage, ...perRecipient] = await fieldBlocks(content);
  const findings = perRecipient.filter((f) => f['action']).map(findingOf).filter((f): f is DsnFinding => f !== undefined);
  if (findings.length === 0) return undefined;
  return { format: 'rfc3464', reportingMta: addressField(perMessage?.['reporting-mta']), findings, original: await returnedMessage(report.parts) };
}

function findingOf(fields: Record<string, string>): DsnFinding | undefined {
  const action = fields['action']!.toLowerCase().trim();
  const status = /([245]\.\d{1,3}\.\d{1,3})/.exec(fields['status'] ?? '')?.[1] ?? null;
  // "smtp; 550 …", "X-Postfix; connect to …": the diagnostic type is dropped, the text kept.
  const diagnosticCode = fields['diagnostic-code'] ? fields['diagnostic-code'].replace(/^\s*[\w-]+\s*;\s*/, '').trim() : null;
  const recipient = addressField(fields['final-recipient']) ?? addressField(fields['original-recipient']);
  const decision = decide(action, status, diagnosticCode, recipient, fields['will-retry-until']);
  return decision ? { recipient, status, diagnosticCode, decision } : undefined;
}

function decide(action: string, status: string | null, diagnostic: string | null, recipient: string | null, retryUntil: string | undefined): DsnDecision | undefined {
  const response = replyText(status, diagnostic, action === 'failed' ? '550' : '450');
  switch (action) {
    case 'failed':
      return { action: 'bounced', bounce: bounceOf(response, status, diagnostic), response };
    case 'delayed': {
      const delayType = classifyReply(replyText(status, diagnostic, '450')).delayType ?? 'General';
      return { action: 'delayed', delay: { type: delayType, expirationTime: isoOrNull(retryUntil), delayedRecipients: recipient ? [recipient] : [] }, response };
    }
    case 'delivered':
    case 'relayed':
    case 'expanded':
      return { action: 'delivered', response };
    default:
      return undefined;
  }
}

/** A failed recipient: a 5.x.x status is the rules' verdict; a final 4.x.x is a Transient bounce. */
function bounceOf(response: string, status: string | null, diagnostic: string | null): Bounce {
  const diagnosticCode = diagnostic ? [diagnostic] : [];
  const classified = classifyReply(response);
  if (classified.outcome === 'bounced') {
    return { type: classified.bounceType ?? 'Undetermined', subType: classified.subType ?? 'Undetermined', message: messageOf(classified.bounceType, status), diagnosticCode };
  }
  const subType = classified.delayType === 'MailboxFull' ? 'MailboxFull' : 'General';
  return { type: status?.startsWith('4') ? 'Transient' : 'Undetermined', subType, message: messageOf('Transient', status), diagnosticCode };
}

const messageOf = (type: string | undefined, status: string | null) =>
  `The receiving mail system reported the message undeliverable${status ? ` (status ${status})` : ''}${type === 'Permanent' ? '; the address is suppressed.' : '.'}`;

/** An SMTP-reply-shaped text for the rules: the diagnostic when it is one, else made from Status. */
function replyText(status: string | null, diagnostic: string | null, basic: string): string {
  if (diagnostic && /^[245]\d\d[ -]/.test(diagnostic)) return diagnostic;
  const code = status ? `${status[0]}${basic.slice(1)}` : basic;
  return `${code} ${status ?? ''} ${diagnostic ?? ''}`.replace(/\s+/g, ' ').trim();
}

const isoOrNull = (value: string | undefined): string | null => {
  if (!value) return null;
  const at = new Date(value.replace(/^\s*\w+;\s*/, ''));
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
};

/** Text bounces: the first SMTP reply in the text, and the first address in angle brackets. */
async function fromText(report: ReportParts): Promise<DeliveryReport | undefined> {
  const reply = /\b([45]\d\d)[ -]([45]\.\d{1,3}\.\d{1,3})?[^\n]*/.exec(report.text)?.[0]?.trim();
  if (!reply || !/undeliver|delivery|failure|returned|bounce|could not be delivered|permanent/i.test(`${report.subject}\n${report.text}`)) return undefined;
  const recipient = /<([^<>\s@]+@[^<>\s@]+)>/.exec(report.text)?.[1]?.toLowerCase() ?? null;
  const status = /\b([45]\.\d{1,3}\.\d{1,3})\b/.exec(reply)?.[1] ?? null;
  const decision: DsnDecision = reply.startsWith('5')
    ? { action: 'bounced', bounce: bounceOf(reply, status, reply), response: reply }
    : { action: 'delayed', delay: { type: classifyReply(reply).delayType ?? 'General', expirationTime: null, delayedRecipients: recipient ? [recipient] : [] }, response: reply };
  return { format: 'text', reportingMta: null, findings: [{ recipient, status, diagnosticCode: reply, decision }], original: await returnedMessage(report.parts) };
}
