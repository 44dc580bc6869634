import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import type { Logger } from '../../core/logger.js';
import { routeRecipient, type RecipientRoute, type RoutingDeps } from '../../core/receiving/index.js';
import { smtpError, temporaryFailure } from './replies.js';

// RCPT TO: decided by address alone (core/receiving/routing): a receiving domain's mailbox, one of
// svc's signed return paths (a DSN), the feedback address (ARF),
// postmaster (always accepted: core/receiving/routing says where it goes), or refused. A lookup that fails
// is 451, never a refusal. The routes are kept per mail transaction for DATA.

export interface RcptDecision {
  onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): void;
  /** The routes decided in this session's current mail transaction. */
  routesOf(session: SMTPServerSession): RecipientRoute[];
}

export function rcptDecision(routing: RoutingDeps, logger: Logger): RcptDecision {
  // smtp-server makes a new envelope object for each mail transaction.
  const routes = new WeakMap<object, RecipientRoute[]>();
  return {
    onRcptTo(address, session, callback) {
      routeRecipient(routing, address.address).then((route) => {
        if (route.kind === 'refused') {
          logger.info({ session: session.id, ip: session.remoteAddress, rcpt: address.address, reply: `${route.code} ${route.message}` }, 'recipient refused');
          return callback(smtpError(route.code, route.message));
        }
        const list = routes.get(session.envelope) ?? [];
        list.push(route);
        routes.set(session.envelope, list);
        callback();
      }, (err: Error) => {
        logger.error({ session: session.id, err: err.message }, 'recipient lookup failed: answered 451');
        callback(temporaryFailure());
      });
    },
    routesOf: (session) => routes.get(session.envelope) ?? [],
  };
}
