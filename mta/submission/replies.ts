import { ServiceError } from '../../core/errors.js';

// What a refused submission hears. smtp-server sends `responseCode` and the message as the reply
// line; enhanced status codes (RFC 3463) lead the text, as on the inbound listener.
//
// Core's refusals map by meaning (docs/operations.md, "Sending through SMTP", lists them):
// - the daily cap (and the team's request rate): 450 4.7.0, "temporarily blocked for policy
//   reasons" (RFC 5321 lists 450 after the data for that). The cap resets at 00:00 UTC, so a
//   queueing client that retries gets the message out the next day;
// - the monthly allowance: 550 5.7.0, a retry within a client's queue lifetime would not help;
// - not allowed to send this (domain not verified, a key pinned to another domain, the sandbox, a
//   suspended team): 550 5.7.1, delivery not authorized;
// - no recipient can receive mail: 550 5.1.1; anything else wrong with the message: 550 5.6.0;
// - the same Message-ID still being accepted, svc unavailable or failing: 451 4.3.0, retry.

export interface SmtpReplyError extends Error {
  responseCode: number;
}

/** An error smtp-server answers as `code text` (text starting with its enhanced status code). */
export function smtpReply(code: number, text: string): SmtpReplyError {
  return Object.assign(new Error(oneLine(text)), { responseCode: code });
}

export const temporaryFailure = () => smtpReply(451, '4.3.0 Temporary failure while accepting the message; please retry');

/** The reply for a core refusal, or undefined when the error is not one (an unexpected failure). */
export function replyForRefusal(err: unknown): SmtpReplyError | undefined {
  if (!(err instanceof ServiceError)) return undefined;
  const message = err.message;
  switch (err.errorName) {
    case 'daily_quota_exceeded':
    case 'rate_limit_exceeded':
      return smtpReply(450, `4.7.0 ${message}`);
    case 'monthly_quota_exceeded':
      return smtpReply(550, `5.7.0 ${message}`);
    case 'suspended_api_key':
    case 'restricted_api_key':
      return smtpReply(550, `5.7.1 ${message}`);
    case 'concurrent_idempotent_requests':
      return smtpReply(451, '4.3.0 A message with this Message-ID is still being accepted; retry once it has finished');
    case 'invalid_idempotent_request':
      return smtpReply(550, '5.6.0 This Message-ID was already sent to these recipients with other content in the last 24 hours');
    default:
      break;
  }
  if (err.statusCode >= 500) return undefined;
  if (err.statusCode === 403) return smtpReply(550, `5.7.1 ${message}`);
  if (err.options.details?.reason === 'invalid_recipient') return smtpReply(550, `5.1.1 ${message}`);
  return smtpReply(550, `5.6.0 ${message}`);
}

/** Reply text is one line of at most ~500 characters (RFC 5321's reply line is 512 octets). */
function oneLine(text: string): string {
  const flat = text.replace(/[\r\n\t]+/g, ' ').replace(/`/g, '');
  return flat.length > 480 ? `${flat.slice(0, 477)}...` : flat;
}
