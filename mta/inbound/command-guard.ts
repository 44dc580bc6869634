import type { SMTPServer } from 'smtp-server';
import type { Logger } from '../../core/logger.js';

// Per-session bounds on what a client may send in command mode, the ones Postfix has and
// smtp-server lacks (it only closes after 10 unknown commands):
// - a command line holding a control character (a bare CR above all: "MAIL FROM:<a@b>\rRCPT TO:…")
//   is refused 501 before smtp-server reads it, whose parameter splitting treats CR as a space;
// - junk commands (NOOP, RSET, VRFY, EXPN, HELP, ETRN, HELO/EHLO) past `maxJunkCommands` since
//   the last accepted message end the session with 421 (Postfix: smtpd_junk_command_limit);
// - error replies (4xx/5xx) past `maxErrors` since the last accepted message end it with 421
//   (Postfix: smtpd_hard_error_limit). A 452 for recipients over the limit is what RFC 5321 asks a
//   client to expect, so it counts only after RECIPIENT_OVERSHOOT of them (Postfix:
//   smtpd_recipient_overshoot_limit).
// smtp-server reads the next command only after the reply went out (it waits for the socket to
// drain), so with these a flood costs a bounded number of replies, then the connection.

export interface CommandLimits {
  maxJunkCommands: number;
  maxErrors: number;
}

const JUNK = new Set(['NOOP', 'RSET', 'VRFY', 'EXPN', 'HELP', 'ETRN', 'HELO', 'EHLO']);
const RECIPIENT_OVERSHOOT = 1000;
// Every control character except TAB; a CR reaching here is a bare one (CRLF and LF end lines).
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/** The parts of smtp-server's connection object the guard wraps (public in its typings). */
interface Connection {
  id: string;
  remoteAddress: string;
  _upgrading: boolean;
  _onCommand(command: Buffer, callback?: () => void): void;
  send(code: number, data?: string | string[] | null, context?: string | false): void;
}

/** Applies the limits to every connection the server makes from now on. */
export function guardCommands(server: SMTPServer, limits: CommandLimits, logger: Logger): void {
  const connections = server.connections as unknown as Set<Connection>;
  const add = connections.add.bind(connections);
  // smtp-server adds each new connection to this set before it reads anything from the socket.
  connections.add = (connection: Connection) => {
    guardConnection(connection, limits, logger);
    return add(connection);
  };
}

function guardConnection(connection: Connection, limits: CommandLimits, logger: Logger): void {
  const onCommand = connection._onCommand.bind(connection);
  const send = connection.send.bind(connection);
  let junk = 0;
  let errors = 0;
  let overshoot = 0;
  let closing = false;
  const close = (reason: string) => {
    closing = true;
    logger.warn({ session: connection.id, ip: connection.remoteAddress, reason }, 'inbound session closed: command limit');
    send(421, `4.7.0 ${reason}, closing connection`);
  };

  connection._onCommand = (command, callback) => {
    // Bytes that arrived in plaintext behind STARTTLS: smtp-server discards them unanswered.
    if (connection._upgrading || closing) return onCommand(command, callback);
    if (CONTROL.test(command.toString('latin1'))) {
      connection.send(501, '5.5.2 Syntax error: control character (bare CR?) in command line');
      if (!closing) setImmediate(() => callback?.());
      return;
    }
    const name = command.toString('latin1').split(' ', 1)[0]!.toUpperCase();
    if (JUNK.has(name) && ++junk > limits.maxJunkCommands) return close('Too many commands without mail');
    onCommand(command, callback);
  };

  connection.send = (code, data, context) => {
    send(code, data, context);
    if (context === 'DATA_OK') {
      junk = errors = overshoot = 0;
      return;
    }
    if (code < 400 || code === 421 || closing) return;
    if (context === 'TOO_MANY_RECIPIENTS' && ++overshoot <= RECIPIENT_OVERSHOOT) return;
    if (++errors > limits.maxErrors) close('Too many errors');
  };
}
