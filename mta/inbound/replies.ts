import type { SMTPServerError } from 'smtp-server';
import { storageFailure } from '../../storage/files/index.js';

/** An error smtp-server turns into exactly this reply (enhanced status code in the text). */
export function smtpError(code: number, text: string): SMTPServerError {
  const err = new Error(text) as SMTPServerError;
  err.responseCode = code;
  return err;
}

/** What a database or Redis hiccup answers: try again later, never a permanent 5xx. */
export const temporaryFailure = () => smtpError(451, '4.3.0 Temporary failure, please try again later');

/**
 * A full disk (spool or database) answers 452 4.3.1, as Postfix does (RFC 3463: mail system
 * full): the client keeps the message and retries. Any other failure passes through unchanged.
 */
export function storageReply(err: unknown): unknown {
  return storageFailure(err) === 'full' ? smtpError(452, '4.3.1 Insufficient system storage, please try again later') : err;
}
