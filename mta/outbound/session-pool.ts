import { SmtpSession, type SessionSettings, type SmtpTarget } from './smtp-client.js';

// Connections reused per MX address: a finished transaction hands its session back, the next
// message for the same address takes it instead of opening (and greeting, EHLO, STARTTLS) again.
// Idle sessions close after a while; a session carries a bounded number of messages.

interface Idle {
  session: SmtpSession;
  timer: NodeJS.Timeout;
  messages: number;
}

export interface PoolOptions {
  idleMs: number;
  maxMessagesPerSession: number;
}

export interface Lease {
  session: SmtpSession;
  reused: boolean;
  /** Gives the session back (reusable) or closes it. */
  release(reusable: boolean): void;
}

const keyOf = (t: SmtpTarget) => `${t.address}|${t.port}|${t.hostname}|${t.tls}`;

export class SessionPool {
  private readonly idle = new Map<string, Idle[]>();
  private readonly counts = new WeakMap<SmtpSession, number>();
  private closed = false;

  constructor(private readonly settings: SessionSettings, private readonly options: PoolOptions) {}

  async acquire(target: SmtpTarget): Promise<Lease> {
    const key = keyOf(target);
    const list = this.idle.get(key);
    while (list?.length) {
      const entry = list.pop()!;
      clearTimeout(entry.timer);
      if (entry.session.usable) return this.lease(key, entry.session, true);
      entry.session.close();
    }
    return this.lease(key, await this.open(target), false);
  }

  private async open(target: SmtpTarget): Promise<SmtpSession> {
    try {
      return await SmtpSession.open(target, this.settings);
    } catch (err) {
      // A broken STARTTLS on an opportunistic hop: deliver in plaintext, as MTAs do.
      if ((err as { code?: string }).code === 'ETLS' && target.tls === 'opportunistic') return SmtpSession.open(target, this.settings, true);
      throw err;
    }
  }

  private lease(key: string, session: SmtpSession, reused: boolean): Lease {
    let released = false;
    return {
      session, reused,
      release: (reusable) => {
        if (released) return;
        released = true;
        const messages = (this.counts.get(session) ?? 0) + 1;
        this.counts.set(session, messages);
        if (!reusable || this.closed || !session.usable || messages >= this.options.maxMessagesPerSession) {
          session.close();
          return;
        }
        const list = this.idle.get(key) ?? [];
        const entry: Idle = {
          session, messages,
          timer: setTimeout(() => {
            const i = list.indexOf(entry);
            if (i >= 0) list.splice(i, 1);
            session.close();
          }, this.options.idleMs),
        };
        entry.timer.unref();
        list.push(entry);
        this.idle.set(key, list);
      },
    };
  }

  closeAll(): void {
    this.closed = true;
    for (const list of this.idle.values()) for (const entry of list) { clearTimeout(entry.timer); entry.session.close(); }
    this.idle.clear();
  }
}
