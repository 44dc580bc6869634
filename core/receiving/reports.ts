// What the reports that come back for mail svc sent say, once parsed (mta/bounces/dsn.ts and
// arf.ts) — the shapes core records from.

// The bounce shapes are the sending side's own (email.bounced's `bounce`): one definition.
import type { Bounce, BounceSubType, BounceType } from '../emails/index.js';

export type { Bounce, BounceSubType, BounceType };

/** `delay` of email.delivery_delayed. */
export interface Delay {
  type: string;
  expirationTime: string | null;
  delayedRecipients: string[];
}

/** The message a report returned (whole, or its headers only). */
export interface ReturnedMessage {
  messageId: string | null;
  /** Header name (lower case) → first value. */
  headers: Record<string, string>;
}

/** What one recipient block of a DSN means for that recipient. */
export type DsnDecision =
  | { action: 'bounced'; bounce: Bounce; response: string }
  | { action: 'delayed'; delay: Delay; response: string }
  | { action: 'delivered'; response: string };

export interface DsnFinding {
  /** Final-Recipient (else Original-Recipient) as a bare address, lower case. */
  recipient: string | null;
  status: string | null;
  diagnosticCode: string | null;
  decision: DsnDecision;
}

/** A delivery status notification (RFC 3464), or a plain-text bounce read as well as it can be. */
export interface DeliveryReport {
  format: 'rfc3464' | 'text';
  reportingMta: string | null;
  findings: DsnFinding[];
  original: ReturnedMessage | null;
}

/** A complaint feedback report (ARF, RFC 5965). */
export interface ComplaintReport {
  feedbackType: string;
  userAgent: string | null;
  originalMailFrom: string | null;
  originalRcptTo: string | null;
  arrivalDate: string | null;
  sourceIp: string | null;
  original: ReturnedMessage | null;
}
