import ipaddr from 'ipaddr.js';

// Per-client limits of the inbound listener: connections open at once per address and per client
// network, and new connections per minute per address (a sliding window). Kept in the process: one
// listener decides for its own sockets, and a restart forgetting the window costs nothing worth a
// Redis round trip per connection.

export interface ConnectionLimitSettings {
  maxPerIp: number;
  /** Open at once from one client network (clientNetwork): one network cannot take every slot. */
  maxPerNetwork: number;
  /** New connections per minute per address; 0 turns the rate limit off. */
  ratePerMinute: number;
}

export type Admission = { ok: true } | { ok: false; reason: string };

const WINDOW_MS = 60_000;

/**
 * The network an address is counted in: its IPv4 /24 (an IPv4-mapped IPv6 address is IPv4), or
 * its IPv6 /64. A /64 is the smallest block any IPv6 network is handed (every LAN and every
 * VPS gets at least one), and one host may use all of it, so the per-address cap alone means
 * nothing for IPv6. A /48 would also catch a holder of a whole site allocation, but providers
 * give unrelated customers /64s out of one /48: one busy neighbour would lock out the rest. A
 * holder of many /64s (or many /24s) is still bounded by smtp_max_connections.
 */
export function clientNetwork(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return `${(parsed as ipaddr.IPv4).octets.slice(0, 3).join('.')}.0/24`;
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...prefix, 0, 0, 0, 0]).toRFC5952String()}/64`;
}

export class ConnectionLimits {
  private readonly open = new Map<string, number>();
  private readonly openPerNetwork = new Map<string, number>();
  private readonly recent = new Map<string, number[]>();

  constructor(private readonly settings: ConnectionLimitSettings, private readonly now: () => number = Date.now) {}

  /** Counts the connection when admitted; call release() with the same address when it closes. */
  admit(ip: string): Admission {
    const open = this.open.get(ip) ?? 0;
    if (open >= this.settings.maxPerIp) return { ok: false, reason: `too many connections from ${ip}` };
    const network = clientNetwork(ip);
    const openInNetwork = this.openPerNetwork.get(network) ?? 0;
    if (openInNetwork >= this.settings.maxPerNetwork) return { ok: false, reason: `too many connections from ${network}` };
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
    this.openPerNetwork.set(network, openInNetwork + 1);
    return { ok: true };
  }

  release(ip: string): void {
    decrement(this.open, ip);
    decrement(this.openPerNetwork, clientNetwork(ip));
  }

  /** Drops windows of addresses that went quiet, so the map stays as small as the active clients. */
  private prune(now: number): void {
    if (this.recent.size < 10_000) return;
    for (const [ip, times] of this.recent) {
      if (times.every((t) => now - t >= WINDOW_MS)) this.recent.delete(ip);
    }
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
