import type { ComplaintReport } from '../../core/receiving/index.js';
import { addressField, fieldBlocks, partOfType, reportParts, returnedMessage } from './dsn-mime.js';

// Complaint feedback reports (ARF, RFC 5965): a multipart/report with a message/feedback-report
// part and the message complained about (whole or headers only). Which email and recipient it is
// about comes from the returned message (its Return-Path is svc's VERP address, or its Message-ID)
// and from Original-Mail-From; the recipient address itself is often redacted by the reporter.

/** The report, or undefined when the message holds no feedback-report part. */
export async function parseArf(raw: Buffer): Promise<ComplaintReport | undefined> {
  const report = await reportParts(raw);
  const part = partOfType(report.parts, 'message/feedback-report');
  if (!part) return undefined;
  const [fields] = await fieldBlocks(part.content);
  if (!fields?.['feedback-type']) return undefined;
  return {
    feedbackType: fields['feedback-type'].toLowerCase(),
    userAgent: fields['user-agent'] ?? null,
    originalMailFrom: addressField(fields['original-mail-from']),
    originalRcptTo: addressField(fields['original-rcpt-to']),
    arrivalDate: fields['arrival-date'] ?? fields['received-date'] ?? null,
    sourceIp: fields['source-ip'] ?? null,
    original: await returnedMessage(report.parts),
  };
}
