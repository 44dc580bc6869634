// Per-client-address limits of the inbound listener: connections open at once, and new connections
// per minute (a sliding window). Kept in the process: one listener decides for its own sockets, and
// a restart forgetting the window costs nothing worth a Redis round trip per connection.

export interface ConnectionLimitSettings {
  maxPerIp: number;
  /** New connections per minute per address; 0 turns the rate limit off. */
  ratePerMinute: number;
}

export type Admission = { ok: true } | { ok: false; reason: string };

const WINDOW_MS = 60_000;

export class ConnectionLimits {
  private readonly open = new Map<string, number>();
  private readonly recent = new Map<string, number[]>();

  constructor(private readonly settings: ConnectionLimitSettings, private readonly now: () => number = Date.now) {}

  /** Counts the connection when admitted; call release() when it closes. */
  admit(ip: string): Admission {
    const open = this.open.get(ip) ?? 0;
    if (open >= this.settings.maxPerIp) return { ok: false, reason: `too many connections from ${ip}` };
    if (this.settings.ratePerMinute > 0) {
      const now = this.now();
      const times = (this.recent.get(ip) ?? []).filter((t) => now - t < WINDOW_MS);
      if (times.length >= this.settings.ratePerMinute) {
        this.recent.set(ip, times);
        return { ok: false, reason: `too many new connections from ${ip} in the last minute` };
      }
      times.push(now);
      this.recent.set(ip, times);
      this.prune(now);
    }
    this.open.set(ip, open + 1);
    return { ok: true };
  }

  release(ip: string): void {
    const open = (this.open.get(ip) ?? 0) - 1;
    if (open > 0) this.open.set(ip, open);
    else this.open.delete(ip);
  }

  /** Drops windows of addresses that went quiet, so the map stays as small as the active clients. */
  private prune(now: number): void {
    if (this.recent.size < 10_000) return;
    for (const [ip, times] of this.recent) {
      if (times.every((t) => now - t >= WINDOW_MS)) this.recent.delete(ip);
    }
  }
}
