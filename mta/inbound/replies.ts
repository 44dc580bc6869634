import type { SMTPServerError } from 'smtp-server';

/** An error smtp-server turns into exactly this reply (enhanced status code in the text). */
export function smtpError(code: number, text: string): SMTPServerError {
  const err = new Error(text) as SMTPServerError;
  err.responseCode = code;
  return err;
}

/** What a database or Redis hiccup answers: try again later, never a permanent 5xx. */
export const temporaryFailure = () => smtpError(451, '4.3.0 Temporary failure, please try again later');
