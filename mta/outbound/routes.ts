import { isIP } from 'node:net';
import { lookupMemo } from '../../dns/lookup-memo.js';
import { resolveMailRoute } from '../../dns/mx.js';
import type { DnsResolver } from '../../dns/resolver.js';
import type { SmtpTarget } from './smtp-client.js';
import type { StsApplied } from './sts-route.js';

// Where to connect for a recipient domain: the smarthost when one is configured, otherwise the
// domain's MX hosts in preference order (implicit MX when it has none; RFC 7505 null MX means no
// mail at all), each host's IPv4 addresses, then IPv6. Lookups go through the injected resolver.

/** `sts`: the MTA-STS policy the route was shaped by (sts-route.ts), for TLS-RPT. */
export type Route =
  | { kind: 'targets'; targets: SmtpTarget[]; sts?: StsApplied }
  | { kind: 'no_route'; reason: string }
  /** `unmatched`: MX hosts an enforced MTA-STS policy left out. */
  | { kind: 'temporary'; error: string; sts?: StsApplied; unmatched?: string[] };

export interface RouteSettings {
  /** host:port of a smarthost, or empty. */
  relay: string;
  port: number;
  /** At most this many addresses are tried per attempt. */
  maxTargets: number;
  /** In-process memo of answers (the resolver may cache in Redis too); 0 turns it off. */
  memoMs: number;
}

export function routeFinder(resolver: DnsResolver, settings: RouteSettings) {
  const addresses = async (host: string): Promise<string[]> => {
    if (isIP(host)) return [host];
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    return [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
  };
  const lookup = async (domain: string, tls: SmtpTarget['tls']): Promise<Route> => {
    if (settings.relay) {
      const [host, port] = splitHostPort(settings.relay);
      const ips = await addresses(host);
      if (!ips.length) return { kind: 'temporary', error: `relay ${host} has no address` };
      return { kind: 'targets', targets: ips.slice(0, settings.maxTargets).map((address) => ({ address, port: port ?? settings.port, hostname: host, tls })) };
    }
    const route = await resolveMailRoute(resolver, domain);
    switch (route.kind) {
      case 'null_mx': return { kind: 'no_route', reason: `556 5.1.10 ${domain} does not accept mail (null MX)` };
      case 'no_mail': return { kind: 'no_route', reason: `550 5.1.2 ${domain} has no mail exchanger` };
      case 'no_domain': return { kind: 'no_route', reason: `550 5.1.2 ${domain} does not exist` };
      case 'temporary': return { kind: 'temporary', error: `DNS lookup for ${domain} failed: ${route.error}` };
      case 'hosts': break;
    }
    const targets: SmtpTarget[] = [];
    for (const host of route.hosts) {
      for (const address of await addresses(host.exchange)) targets.push({ address, port: settings.port, hostname: host.exchange, tls });
      if (targets.length >= settings.maxTargets) break;
    }
    return targets.length ? { kind: 'targets', targets: targets.slice(0, settings.maxTargets) } : { kind: 'temporary', error: `no address for the MX hosts of ${domain}` };
  };
  // One memo per TLS requirement: a domain's route differs by it. A temporary failure is not kept.
  const memoOptions = { ttlMs: settings.memoMs, maxEntries: 10_000, now: () => performance.now(), keepsAnswer: (r: Route) => r.kind !== 'temporary' };
  const memos = {
    opportunistic: lookupMemo((domain) => lookup(domain, 'opportunistic'), memoOptions),
    enforced: lookupMemo((domain) => lookup(domain, 'enforced'), memoOptions),
  };
  return (domain: string, tls: SmtpTarget['tls']): Promise<Route> => memos[tls](domain);
}

function splitHostPort(value: string): [string, number | undefined] {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) return [bracketed[1]!, bracketed[2] ? Number(bracketed[2]) : undefined];
  const [host, port] = value.split(':');
  return [host!, port ? Number(port) : undefined];
}
