import type { SMTPServerSession } from 'smtp-server';
import type { Logger } from '../../core/logger.js';
import type { ConnectionLimits } from './connection-limits.js';
import { smtpError } from './replies.js';

// CONNECT: a client is admitted within the per-address, per-network and per-minute limits
// (./connection-limits), or hears 421 4.7.0; its slot is given back when the session closes.

type Callback = (err?: Error | null) => void;

export interface ConnectDecision {
  onConnect(session: SMTPServerSession, callback: Callback): void;
  /** The session ended: its slot goes back. */
  onClose(session: SMTPServerSession): void;
}

export function connectDecision(limits: ConnectionLimits, logger: Logger): ConnectDecision {
  const admitted = new Set<string>();
  return {
    onConnect(session, callback) {
      const admission = limits.admit(session.remoteAddress);
      if (!admission.ok) {
        logger.warn({ ip: session.remoteAddress, reason: admission.reason }, 'inbound connection refused');
        return callback(smtpError(421, `4.7.0 ${admission.reason}, try again later`));
      }
      admitted.add(session.id);
      logger.info({ session: session.id, ip: session.remoteAddress, ptr: session.clientHostname }, 'inbound session opened');
      callback();
    },
    onClose(session) {
      if (!admitted.delete(session.id)) return;
      limits.release(session.remoteAddress);
      logger.info({ session: session.id, ip: session.remoteAddress, helo: session.hostNameAppearsAs, messages: session.transaction - 1 }, 'inbound session closed');
    },
  };
}
