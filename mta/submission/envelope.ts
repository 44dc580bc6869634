import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import type { SendingDomains } from '../../core/emails/index.js';
import type { Logger } from '../../core/logger.js';
import { ServiceError } from '../../core/errors.js';
import type { Principal } from '../../core/principal.js';
import type { RateLimiter } from '../../core/rate-limit.js';
import type { SubmissionLogin } from './auth.js';
import { smtpReply, temporaryFailure } from './replies.js';

// MAIL FROM and RCPT TO of an authenticated session (smtp-server refuses both with 530 before
// AUTH). MAIL FROM checks the key again (a session outlives a revocation or a suspension
// otherwise; the check is the in-memory key cache's, dropped whenever a key changes), spends one
// token of the team's request bucket, the one every API call spends (a message is one request),
// and tells a key pinned to a domain early that an envelope sender of another domain will not
// do; the From header is checked again, by the send path, at the end of the data. RCPT TO stops
// at the API's 50 recipients per email.

export const maxRecipients = 50;

export interface EnvelopeDeps {
  /** core/api-keys' check of a bare key (./auth's). */
  verifyKey(token: string): Promise<Principal>;
  /** The team's token bucket (the HTTP API's). */
  teamRate: RateLimiter;
  domains: Pick<SendingDomains, 'sendingDomain'>;
  logger: Logger;
}

type Callback = (err?: Error | null) => void;

export const principalOf = (session: SMTPServerSession) => (session.user as SubmissionLogin).principal;

export function envelopeDecisions(deps: EnvelopeDeps) {
  return {
    onMailFrom(address: SMTPServerAddress, session: SMTPServerSession, callback: Callback): void {
      mailFrom(deps, address.address, session.user as SubmissionLogin).then(() => callback(), (err: Error & { responseCode?: number }) => {
        if (err.responseCode) return callback(err);
        deps.logger.error({ session: session.id, err: err.message }, 'submission MAIL FROM could not be checked: answered 451');
        callback(temporaryFailure());
      });
    },
    onRcptTo(_address: SMTPServerAddress, session: SMTPServerSession, callback: Callback): void {
      if (session.envelope.rcptTo.length < maxRecipients) return callback();
      callback(smtpReply(452, `4.5.3 Too many recipients: at most ${maxRecipients} per message`));
    },
  };
}

async function mailFrom(deps: EnvelopeDeps, sender: string, login: SubmissionLogin): Promise<void> {
  const principal = await deps.verifyKey(login.key).catch((err: unknown) => {
    if (err instanceof ServiceError && err.statusCode < 500) throw smtpReply(550, `5.7.1 ${err.message}`);
    throw err;
  });
  login.principal = principal;
  const rate = await deps.teamRate(principal.teamId);
  if (!rate.allowed) throw smtpReply(450, `4.7.0 Too many requests: the team's limit is ${rate.limit} at once; retry in ${rate.retryAfterSeconds} s`);
  if (!principal.domainId || !sender.includes('@')) return;
  const domain = sender.slice(sender.lastIndexOf('@') + 1).toLowerCase();
  const found = await deps.domains.sendingDomain(principal.teamId, domain);
  if (found?.id !== principal.domainId) throw smtpReply(550, `5.7.1 This API key may only send from its own domain, not from ${domain}`);
}
