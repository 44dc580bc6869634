// Remote SMTP replies → what happened to the recipient, as DATA: each rule names what it
// matches (basic code, enhanced status code, text), what it means, and a sample reply a real
// server sends; a test runs every sample through classifyReply and expects that rule to win.
// Rules are read top to bottom; the first match decides. Bounce types follow the hosted API's
// shapes: a Permanent bounce (and only that) puts the address on the suppression list.

export type ReplyOutcome = 'delivered' | 'deferred' | 'bounced';
export type BounceType = 'Permanent' | 'Transient' | 'Undetermined';
export type BounceSubType = 'General' | 'NoEmail' | 'MailboxFull' | 'MessageTooLarge' | 'ContentRejected' | 'AttachmentRejected' | 'Undetermined';
/** `delay.type` of email.delivery_delayed. */
export type DelayType = 'General' | 'MailboxFull' | 'SpamDetected' | 'RecipientServerError' | 'TransientCommunicationFailure' | 'InternalFailure' | 'Undetermined';

export interface ReplyRule {
  name: string;
  /** Basic reply code, e.g. /^55[0-4]$/. */
  code?: RegExp;
  /** Enhanced status code (RFC 3463), e.g. /^5\.1\.1$/. */
  status?: RegExp;
  /** The reply text after the codes. */
  text?: RegExp;
  outcome: ReplyOutcome;
  bounceType?: BounceType;
  subType?: BounceSubType;
  delayType?: DelayType;
  sample: string;
}

const bounce = (bounceType: BounceType, subType: BounceSubType) => ({ outcome: 'bounced' as const, bounceType, subType });
const defer = (delayType: DelayType) => ({ outcome: 'deferred' as const, delayType });

export const replyRules: readonly ReplyRule[] = [
  { name: 'accepted', code: /^2\d\d$/, outcome: 'delivered', sample: '250 2.0.0 Ok: queued as 4B5C2A1F3' },

  // Temporary: the message may go later.
  { name: 'mailbox-full-temporary', code: /^4\d\d$/, status: /^4\.2\.2$/, ...defer('MailboxFull'), sample: '452 4.2.2 The email account that you tried to reach is over quota. Please direct the recipient to https://support.example/quota' },
  { name: 'mailbox-full-temporary-text', code: /^4\d\d$/, text: /(mailbox|quota|storage).{0,20}(full|exceeded)|over quota/i, ...defer('MailboxFull'), sample: '452 Mailbox full, try again later' },
  { name: 'greylisted', code: /^4\d\d$/, text: /grey ?list|gray ?list|try again later|come back later/i, ...defer('TransientCommunicationFailure'), sample: '451 4.7.1 Greylisting in action, please come back later' },
  { name: 'spam-suspected-temporary', code: /^4\d\d$/, text: /\bspam\b|unsolicited|suspicious/i, ...defer('SpamDetected'), sample: '421 4.7.0 [192.0.2.1] Our system has detected an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been temporarily rate limited.' },
  { name: 'server-resources', code: /^4\d\d$/, status: /^4\.3\.\d+$/, ...defer('RecipientServerError'), sample: '452 4.3.1 Insufficient system storage' },
  { name: 'network-routing', code: /^4\d\d$/, status: /^4\.4\.\d+$/, ...defer('TransientCommunicationFailure'), sample: '451 4.4.1 No answer from host' },
  { name: 'closing-channel', code: /^421$/, ...defer('TransientCommunicationFailure'), sample: '421 mx.example.net Service not available, closing transmission channel' },
  { name: 'temporary-other', code: /^4\d\d$/, ...defer('General'), sample: '450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered.' },

  // Refusals that are not about the address: never suppress it.
  { name: 'mailbox-full', code: /^5\d\d$/, status: /^5\.2\.2$/, ...bounce('Transient', 'MailboxFull'), sample: '552 5.2.2 <ann@example.net>: Recipient address rejected: Mailbox full' },
  { name: 'message-too-large', code: /^5\d\d$/, status: /^5\.3\.4$/, ...bounce('Transient', 'MessageTooLarge'), sample: '552 5.3.4 Message size exceeds fixed maximum message size' },
  { name: 'message-too-large-text', code: /^5\d\d$/, text: /message (size|too (big|large))|size (limit|exceeds)/i, ...bounce('Transient', 'MessageTooLarge'), sample: '552 Message size exceeds fixed limit' },
  { name: 'attachment-rejected', code: /^5\d\d$/, text: /attachment|file type|\.exe\b|forbidden (file|extension)/i, ...bounce('Transient', 'AttachmentRejected'), sample: '552 5.7.0 This message was blocked because its content presents a potential security issue: the attachment type is not allowed' },
  { name: 'blocklisted-sender', code: /^5\d\d$/, text: /block ?list|black ?list|spamhaus|barracuda|\bRBL\b|DNSBL|client host .* blocked|your IP/i, ...bounce('Undetermined', 'Undetermined'), sample: '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org' },
  { name: 'authentication-policy', code: /^5\d\d$/, text: /DMARC|SPF|DKIM|not authenticated|unauthenticated/i, ...bounce('Undetermined', 'Undetermined'), sample: '550 5.7.26 Unauthenticated email from sender.example is not accepted due to domain\'s DMARC policy.' },
  { name: 'content-rejected', code: /^5\d\d$/, text: /\bspam\b|content|virus|malware|phish|unsolicited|policy/i, ...bounce('Transient', 'ContentRejected'), sample: '550 5.7.1 Message rejected as spam by Content Filtering.' },
  { name: 'content-rejected-status', code: /^5\d\d$/, status: /^5\.7\.(1|28)$/, ...bounce('Transient', 'ContentRejected'), sample: '550 5.7.1 Delivery not authorized, message refused' },

  // Refusals about the address itself.
  { name: 'no-such-user', code: /^5\d\d$/, status: /^5\.1\.(0|1|6)$/, ...bounce('Permanent', 'NoEmail'), sample: '550 5.1.1 <nobody@example.net>: Recipient address rejected: User unknown in virtual mailbox table' },
  { name: 'no-such-user-text', code: /^5\d\d$/, text: /user unknown|unknown user|no such (user|mailbox|recipient)|does not exist|doesn't exist|mailbox (unavailable|not found)|recipient (not found|unknown|rejected)|invalid (recipient|mailbox)|address rejected/i, ...bounce('Permanent', 'NoEmail'), sample: '550 Requested action not taken: mailbox unavailable' },
  { name: 'bad-destination', code: /^5\d\d$/, status: /^5\.1\.(2|10)$/, ...bounce('Permanent', 'General'), sample: '556 5.1.10 Recipient address has null MX' },
  { name: 'mailbox-disabled', code: /^5\d\d$/, status: /^5\.2\.1$/, ...bounce('Permanent', 'General'), sample: '550 5.2.1 The email account that you tried to reach is disabled.' },
  { name: 'permanent-other', code: /^5\d\d$/, ...bounce('Permanent', 'General'), sample: '554 5.0.0 Transaction failed' },
];

export interface ParsedReply {
  code: number;
  /** Enhanced status code, when the reply carries one. */
  status?: string;
  text: string;
}

/** Splits "550 5.1.1 text" (and multi-line "550-5.1.1 a\n550 5.1.1 b") into its parts. */
export function parseReply(reply: string): ParsedReply | undefined {
  const lines = reply.trim().split(/\r?\n/);
  const first = /^([2-5]\d\d)[ -]?(.*)$/.exec(lines[0] ?? '');
  if (!first) return undefined;
  const rest = lines.map((l) => l.replace(/^[2-5]\d\d[ -]?/, '')).join(' ');
  const status = /^([245]\.\d{1,3}\.\d{1,3})\b/.exec(first[2]!.trim())?.[1];
  return { code: Number(first[1]), status, text: status ? rest.replace(status, '').trim() : rest.trim() };
}

export interface Classification {
  outcome: ReplyOutcome;
  rule: string;
  bounceType?: BounceType;
  subType?: BounceSubType;
  delayType?: DelayType;
  reply: ParsedReply;
}

const fallback: ReplyRule = { name: 'unparsed', outcome: 'deferred', delayType: 'Undetermined', sample: 'garbage' };

/** What a reply means. A reply that is not SMTP at all defers (it is never a reason to bounce). */
export function classifyReply(reply: string): Classification {
  const parsed = parseReply(reply) ?? { code: 0, text: reply };
  const code = String(parsed.code);
  const rule = replyRules.find((r) =>
    (!r.code || r.code.test(code)) && (!r.status || (parsed.status !== undefined && r.status.test(parsed.status))) && (!r.text || r.text.test(parsed.text)),
  ) ?? fallback;
  return { outcome: rule.outcome, rule: rule.name, bounceType: rule.bounceType, subType: rule.subType, delayType: rule.delayType, reply: parsed };
}
