// The live trace of delivery attempts (`svc admin trace`): each attempt's report, as the outbound
// queue writes it to its log, handed to whoever is watching. The hub lives in the process that
// serves the admin socket; an outbound queue in that process publishes here directly, one in
// another process through Redis (bin/attempt-trace.ts). No timers here: a watcher ends when its
// connection closes or the process stops.

/** One delivery attempt as the trace prints it. */
export interface AttemptTraceLine {
  object: 'attempt';
  at: string;
  email_id: string;
  recipient_id: string;
  team_id: string;
  region: string;
  rcpt: string;
  domain: string;
  /** The recipient's attempt number (1 for the first). */
  attempt: number;
  /** delivered | deferred | bounced | ambiguous | suppressed | failed. */
  status: string;
  /** `host[address]:port`, or `none`. */
  relay: string;
  tls: string;
  reply: string;
  /** The enhanced status code of the reply, when it has one. */
  dsn: string | null;
  /** Seconds since the email was accepted. */
  delay_s: number | null;
  /** Seconds this attempt took. */
  attempt_s: number;
}

/** What one watcher follows: one email, one destination domain, one address, or (empty) everything. */
export interface TraceFilter {
  emailId?: string;
  domain?: string;
  address?: string;
}

export function traceMatches(filter: TraceFilter, line: AttemptTraceLine): boolean {
  if (filter.emailId && line.email_id !== filter.emailId) return false;
  if (filter.domain && line.domain !== filter.domain) return false;
  if (filter.address && line.rcpt.toLowerCase() !== filter.address) return false;
  return true;
}

/** Reads `svc admin trace`'s argument: an email id, an address, or a destination domain. */
export function traceFilterOf(target: string | undefined): TraceFilter {
  const value = (target ?? '').trim().toLowerCase();
  if (!value) return {};
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value)) return { emailId: value };
  if (value.includes('@')) return { address: value };
  return { domain: value };
}

interface Watcher {
  filter: TraceFilter;
  onLine(line: AttemptTraceLine): void;
  onEnd(): void;
}

export interface TraceHub {
  /** An attempt just reported (by this process's queue, or relayed from another's). */
  publish(line: AttemptTraceLine): void;
  /** Follows attempts matching `filter` until the returned function is called or endAll(). */
  watch(filter: TraceFilter, onLine: (line: AttemptTraceLine) => void, onEnd: () => void): () => void;
  readonly watchers: number;
  /** The process stops: every watcher is told, and let go. */
  endAll(): void;
}

/**
 * `activeChanged(true)` when the first watcher arrives and `(false)` when the last leaves: the
 * process listens to other processes' attempts only while someone watches.
 */
export function traceHub(activeChanged: (active: boolean) => void = () => undefined): TraceHub {
  const watchers = new Set<Watcher>();
  const remove = (w: Watcher) => {
    if (watchers.delete(w) && watchers.size === 0) activeChanged(false);
  };
  return {
    publish(line) {
      for (const w of watchers) if (traceMatches(w.filter, line)) w.onLine(line);
    },
    watch(filter, onLine, onEnd) {
      const w: Watcher = { filter, onLine, onEnd };
      watchers.add(w);
      if (watchers.size === 1) activeChanged(true);
      return () => remove(w);
    },
    get watchers() { return watchers.size; },
    endAll() {
      for (const w of [...watchers]) {
        remove(w);
        w.onEnd();
      }
    },
  };
}
