import type { SMTPServer } from 'smtp-server';
import type { Logger } from '../../core/logger.js';

// The bound on memory across sessions. A message is held in memory while it is received and
// checked (./data), so without a total, many large messages at once could need gigabytes. Every
// message in DATA holds part of one budget: at the DATA command as much as MAIL FROM declared
// with SIZE=, then more as the bytes come in. A DATA that would push the total past the limit is
// answered 452 4.3.1 (Postfix does the same when its queue file system is short); one that grows
// past it while streaming is read to the end without being kept and answered 452 there. Never a
// 5xx: the sender keeps the message and tries again later.

export const BUDGET_FULL_TEXT = '4.3.1 Insufficient system storage, please try again later';

export class InflightBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.used;
  }

  /** A hold of `bytes` (0: an empty one that grows), or undefined when they do not fit now. */
  hold(bytes: number): Hold | undefined {
    if (!this.take(bytes)) return undefined;
    return new Hold(this, bytes);
  }

  /** @internal */ take(bytes: number): boolean {
    if (bytes > 0 && this.used + bytes > this.limit) return false;
    this.used += bytes;
    return true;
  }

  /** @internal */ give(bytes: number): void {
    this.used -= bytes;
  }
}

/** The share of the budget one message holds. */
export class Hold {
  private released = false;

  constructor(private readonly budget: InflightBudget, private held: number) {}

  get bytes(): number {
    return this.held;
  }

  /** Makes the hold cover `total` bytes; false when the budget has no room for the rest. */
  grow(total: number): boolean {
    if (this.released) return false;
    if (total <= this.held) return true;
    if (!this.budget.take(total - this.held)) return false;
    this.held = total;
    return true;
  }

  /** Gives the bytes back (the message is committed or refused); twice is harmless. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this.held);
    this.held = 0;
  }
}

/** The parts of smtp-server's connection object the DATA check uses (public in its typings). */
interface Connection {
  id: string;
  remoteAddress: string;
  _upgrading: boolean;
  session: { envelope: { mailFrom: false | { args?: Record<string, string> | false }; rcptTo: unknown[] } };
  _onCommand(command: Buffer, callback?: () => void): void;
  send(code: number, data?: string | string[] | null, context?: string | false): void;
}

/**
 * Checks every DATA command against the budget before smtp-server answers 354: a message whose
 * declared SIZE does not fit is refused 452 then. The hold made here waits in `declared` (by
 * session id) for the onData handler; one never taken (the session closed first) is released
 * by the caller's onClose.
 */
export function guardDataBudget(server: SMTPServer, budget: InflightBudget, declared: Map<string, Hold>, logger: Logger): void {
  const connections = server.connections as unknown as Set<Connection>;
  const add = connections.add.bind(connections);
  // smtp-server adds each new connection to this set before it reads anything from the socket.
  connections.add = (connection: Connection) => {
    const onCommand = connection._onCommand.bind(connection);
    connection._onCommand = (command, callback) => {
      const name = command.toString('latin1').split(' ', 1)[0]!.toUpperCase();
      const { envelope } = connection.session;
      // Without a recipient smtp-server answers 503 itself; nothing to hold then.
      if (name !== 'DATA' || connection._upgrading || envelope.rcptTo.length === 0) return onCommand(command, callback);
      declared.get(connection.id)?.release();
      declared.delete(connection.id);
      const size = Number((envelope.mailFrom && envelope.mailFrom.args && envelope.mailFrom.args.SIZE) || 0);
      const hold = budget.hold(Number.isSafeInteger(size) ? size : budget.limit + 1);
      if (!hold) {
        logger.warn({ session: connection.id, ip: connection.remoteAddress, declared: size, inflight: budget.inUse, limit: budget.limit }, 'DATA refused: in-flight budget full, answered 452');
        connection.send(452, BUDGET_FULL_TEXT);
        setImmediate(() => callback?.());
        return;
      }
      declared.set(connection.id, hold);
      onCommand(command, callback);
    };
    return add(connection);
  };
}
