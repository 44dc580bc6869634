import { promises as dnsPromises } from 'node:dns';
import { isIP } from 'node:net';

/** The slice of `dns.promises.Resolver` svc uses; everything that looks up DNS receives one. */
export interface DnsResolver {
  resolveMx(name: string): Promise<{ exchange: string; priority: number }[]>;
  resolveTxt(name: string): Promise<string[][]>;
  resolveCname(name: string): Promise<string[]>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  resolveNs(name: string): Promise<string[]>;
  reverse(ip: string): Promise<string[]>;
}

export interface ResolverOptions {
  /** `host[:port]` entries (IPv6 with a port as `[addr]:port`); empty uses the system resolvers. */
  servers: readonly string[];
  timeoutMs?: number;
  tries?: number;
}

export function createResolver(options: ResolverOptions): DnsResolver {
  const resolver = new dnsPromises.Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
  if (options.servers.length > 0) resolver.setServers(options.servers.map(checkServer));
  return resolver;
}

/** c-ares takes IP addresses only: a host name here would fail at the first lookup, so fail now. */
export function checkServer(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  const hostPort = /^([^:]+):(\d{1,5})$/.exec(entry);
  const host = bracketed?.[1] ?? hostPort?.[1] ?? entry;
  const port = bracketed?.[2] ?? hostPort?.[2];
  if (!isIP(host)) throw new Error(`DNS server "${entry}" must be an IP address with an optional port`);
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw new Error(`DNS server "${entry}" has a bad port`);
  return entry;
}

/** DNS error codes that mean "the name or the record does not exist" (an answer, not a failure). */
export const notFoundCodes: ReadonlySet<string> = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME']);

export const isNotFound = (err: unknown): boolean => notFoundCodes.has((err as NodeJS.ErrnoException)?.code ?? '');
