import type { SMTPServerAuthentication, SMTPServerAuthenticationResponse, SMTPServerSession } from 'smtp-server';
import { ServiceError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { Principal } from '../../core/principal.js';
import { clientBucket, type RateLimiter } from '../../core/rate-limit.js';
import { smtpReply } from './replies.js';

// AUTH PLAIN / LOGIN as the hosted API's SMTP relay does it: the user name is fixed (`resend`,
// any case) and the password is an API key, checked by core/api-keys exactly as the HTTP API's
// Bearer key is (a key of either class may send; a sending_access key pinned to a domain stays
// pinned, which the send path enforces). Failed logins spend from a token bucket per client
// address (IPv6 per /64); an empty bucket refuses every login from there, a right key included,
// until it refills, so guessing keys over SMTP costs time. Each refusal is one log line that never
// holds the password (nor the user name given, which is sometimes the key typed in the wrong box).

export const SUBMISSION_USER = 'resend';

export interface AuthDeps {
  /** core/api-keys' check of a bare key for the `emails:send` operation. */
  verifyKey(token: string): Promise<Principal>;
  /** The failed-login bucket per client address. */
  failures: RateLimiter;
  logger: Logger;
}

/** The session's user: who logged in, and the key, checked again at each MAIL FROM (./envelope). */
export interface SubmissionLogin {
  principal: Principal;
  key: string;
}

type AuthCallback = (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void;

/** smtp-server's onAuth: the session's user becomes the key's principal. */
export function authDecision(deps: AuthDeps) {
  return (auth: SMTPServerAuthentication, session: SMTPServerSession, callback: AuthCallback): void => {
    login(deps, auth, session).then((principal) => {
      const user: SubmissionLogin = { principal, key: auth.password ?? '' };
      callback(null, { user });
    }, (err: Error) => callback(err));
  };
}

async function login(deps: AuthDeps, auth: SMTPServerAuthentication, session: SMTPServerSession): Promise<Principal> {
  const client = clientBucket(session.remoteAddress);
  const left = await deps.failures(client, 0);
  const base = { session: session.id, ip: session.remoteAddress, method: auth.method };
  if (left.remaining < 1) {
    deps.logger.warn({ ...base, reason: 'too_many_failures' }, 'submission login refused');
    throw smtpReply(454, '4.7.0 Too many failed logins from this address; try again later');
  }
  const userOk = (auth.username ?? '').toLowerCase() === SUBMISSION_USER;
  try {
    if (!userOk) throw new ServiceError(401, 'invalid_api_key', `The user name is "${SUBMISSION_USER}" and the password an API key.`);
    const principal = await deps.verifyKey(auth.password ?? '');
    deps.logger.info({ ...base, teamId: principal.teamId, apiKeyId: principal.apiKeyId }, 'submission login');
    return principal;
  } catch (err) {
    if (!(err instanceof ServiceError) || err.statusCode >= 500) {
      deps.logger.error({ ...base, err: (err as Error).message }, 'submission login could not be checked: answered 454');
      throw smtpReply(454, '4.7.0 Temporary authentication failure; please retry');
    }
    await deps.failures(client, 1);
    deps.logger.warn({ ...base, userOk, reason: err.errorName }, 'submission login refused');
    throw smtpReply(535, `5.7.8 Authentication credentials invalid: ${err.message}`);
  }
}
