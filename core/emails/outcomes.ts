// What one delivery attempt (or a later report) decided for one recipient. A closed union: the
// outbound MTA produces these, core/emails/delivery.ts records them.

export type BounceType = 'Permanent' | 'Transient' | 'Undetermined';
export type BounceSubType = 'General' | 'NoEmail' | 'MailboxFull' | 'MessageTooLarge' | 'ContentRejected' | 'AttachmentRejected' | 'Undetermined';

export interface Bounce {
  type: BounceType;
  subType: BounceSubType;
  message: string;
  diagnosticCode: string[];
}

export type DeliveryOutcome =
  /** The remote server took responsibility (2xx after the data). */
  | { kind: 'delivered'; response: string }
  /** Not delivered now; safe to try again later (nothing was submitted, or the reply was 4xx). */
  | {
    kind: 'deferred'; response: string; delayType: string;
    /**
     * svc's own failure before anything was offered (it could not record the attempt: disk full,
     * storage error): tried again after this long rather than on the retry schedule, and not
     * counted as an attempt — the remote server never saw it.
     */
    internalRetryMs?: number;
  }
  /** Refused for good (5xx, no mail route), or a report said so. */
  | { kind: 'bounced'; response: string; bounce: Bounce; /** The mailbox simulator's bounces never suppress. */ keepAddress?: boolean }
  /** The data went out and no final reply came: never resent; waits for a report or the sweep. */
  | { kind: 'ambiguous'; reason: string }
  /** The team suppresses the address (checked again right before sending). */
  | { kind: 'suppressed'; origin: string }
  /**
   * Given up without a verdict: an ambiguous submission no report resolved within two hours, or a
   * recipient the operator deleted from the queue (`deleted_by_operator`, with the reason given).
   */
  | { kind: 'failed'; reason: 'ambiguous_submission' | `deleted_by_operator${string}` };
