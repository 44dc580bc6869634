import ipaddr from 'ipaddr.js';
import { spf } from 'mailauth';
import { mailauthResolver } from './mailauth-resolver.js';
import { isNotFound, type DnsResolver } from './resolver.js';

// `svc admin check dns`: what the rest of the Internet sees of this appliance, checked through the
// appliance's own resolver. Each check passes, warns or fails with one line saying why; nothing
// here changes anything.
//  - forward: mail_hostname's A/AAAA (the EHLO name, and the target every customer record names);
//  - reverse: each such address's PTR names mail_hostname back (forward-confirmed reverse DNS);
//  - spf: the SPF record at each region's MAIL FROM host — what every customer's `send.` CNAME
//    (or `include:` in mx_txt mode) leans on — authorizes the addresses mail leaves from;
//  - inbound: each receiving region's inbound host (the target of customers' MX) resolves here;
//  - port25: a TCP connection to a well-known MX opens (many providers block port 25 outbound).

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface CheckLine {
  check: 'forward' | 'reverse' | 'spf' | 'inbound' | 'port25';
  /** The host or address it is about. */
  subject: string;
  status: CheckStatus;
  reason: string;
}

export interface DnsCheckReport {
  object: 'dns_check';
  mail_hostname: string;
  /** mail_hostname's addresses: what the other checks hold the answers against. */
  addresses: string[];
  checks: CheckLine[];
  /** No check failed (warnings allowed). */
  ok: boolean;
}

/** The region settings the check reads (core/regions.ts's Region has them). */
export interface CheckedRegion {
  name: string;
  mailFromHost: string;
  inboundHost: string;
  receiving: boolean;
  sourceAddress?: string;
}

export type PortProbe = (target: string, timeoutMs: number) => Promise<{ ok: true; address: string; ms: number } | { ok: false; reason: string }>;

export interface DnsCheckDeps {
  resolver: DnsResolver;
  hostname: string;
  regions: readonly CheckedRegion[];
  probe: PortProbe;
}

export interface DnsCheckOptions {
  /** `host[:port]` the port 25 check connects to. */
  port25Target?: string;
  timeoutMs?: number;
}

export const defaultPort25Target = 'gmail-smtp-in.l.google.com:25';
const name = (n: string) => n.toLowerCase().replace(/\.$/, '');

export function dnsSelfCheck(deps: DnsCheckDeps) {
  return async (options: DnsCheckOptions = {}): Promise<DnsCheckReport> => {
    const host = name(deps.hostname);
    const forward = await addressesOf(deps.resolver, host);
    const addresses = forward.addresses;
    const sources = [...new Set([...addresses, ...deps.regions.flatMap((r) => (r.sourceAddress ? [r.sourceAddress] : []))])];
    const target = options.port25Target || defaultPort25Target;
    const [reverse, spfLines, inbound, port25] = await Promise.all([
      Promise.all(addresses.map((a) => reverseCheck(deps.resolver, host, a))),
      Promise.all(distinct(deps.regions.map((r) => r.mailFromHost)).map((h) => spfCheck(deps.resolver, h, sources, host))),
      Promise.all(distinct(deps.regions.filter((r) => r.receiving).map((r) => r.inboundHost)).map((h) => inboundCheck(deps.resolver, h, host, addresses))),
      portCheck(deps.probe, target, options.timeoutMs ?? 5000),
    ]);
    const checks = [forwardLine(host, forward), ...reverse, ...spfLines, ...inbound, port25];
    return { object: 'dns_check', mail_hostname: host, addresses, checks, ok: checks.every((c) => c.status !== 'fail') };
  };
}

const distinct = (names: string[]) => [...new Set(names.map(name))];

interface Forward { addresses: string[]; error?: string }

async function addressesOf(resolver: DnsResolver, host: string): Promise<Forward> {
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const addresses: string[] = [];
  let error: string | undefined;
  for (const result of [v4, v6]) {
    if (result.status === 'fulfilled') addresses.push(...result.value);
    else if (!isNotFound(result.reason)) error = (result.reason as NodeJS.ErrnoException).code ?? 'error';
  }
  return { addresses, ...(error ? { error } : {}) };
}

function forwardLine(host: string, forward: Forward): CheckLine {
  const line = (status: CheckStatus, reason: string): CheckLine => ({ check: 'forward', subject: host, status, reason });
  if (forward.addresses.length === 0) {
    return line('fail', forward.error
      ? `${host} could not be resolved (${forward.error})`
      : `${host} has no A or AAAA record: publish this machine's public address under mail_hostname`);
  }
  const listed = forward.addresses.join(', ');
  const unroutable = forward.addresses.filter((a) => !isPublic(a));
  if (unroutable.length > 0) {
    return line('warn', `${host} resolves to ${listed}; ${unroutable.join(', ')} is not a public address: other mail servers cannot reach it (fine for a trial)`);
  }
  return line('pass', `${host} resolves to ${listed}`);
}

function isPublic(address: string): boolean {
  try {
    return ipaddr.process(address).range() === 'unicast';
  } catch {
    return false;
  }
}

async function reverseCheck(resolver: DnsResolver, host: string, address: string): Promise<CheckLine> {
  const line = (status: CheckStatus, reason: string): CheckLine => ({ check: 'reverse', subject: address, status, reason });
  let names: string[];
  try {
    names = (await resolver.reverse(address)).map(name);
  } catch (err) {
    if (!isNotFound(err)) return line('fail', `the PTR of ${address} could not be looked up (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    names = [];
  }
  if (names.length === 0) {
    return line('fail', `${address} has no PTR record: ask its provider to set it to ${host}; many receivers refuse mail from an address without one`);
  }
  // host's own addresses include `address` (that is how it got here): a PTR naming host is confirmed.
  if (names.includes(host)) return line('pass', `PTR ${address} → ${host}, which resolves back to it (forward-confirmed)`);
  for (const other of names) {
    const back = await addressesOf(resolver, other);
    if (back.addresses.includes(address)) {
      return line('warn', `PTR ${address} → ${other} (forward-confirmed), not ${host}: set it to ${host}, svc's EHLO name, so the two agree`);
    }
  }
  return line('fail', `PTR ${address} → ${names.join(', ')}, which does not resolve back to ${address}: set the PTR to ${host}`);
}

async function spfCheck(resolver: DnsResolver, mailFromHost: string, sources: string[], ehlo: string): Promise<CheckLine> {
  const line = (status: CheckStatus, reason: string): CheckLine => ({ check: 'spf', subject: mailFromHost, status, reason });
  const suggestion = `"v=spf1 ${sources.map((a) => (a.includes(':') ? `ip6:${a}` : `ip4:${a}`)).join(' ') || 'a'} -all"`;
  let texts: string[];
  try {
    texts = (await resolver.resolveTxt(mailFromHost)).map((parts) => parts.join(''));
  } catch (err) {
    if (!isNotFound(err)) return line('fail', `the TXT records of ${mailFromHost} could not be looked up (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    texts = [];
  }
  const records = texts.filter((t) => /^v=spf1(\s|$)/i.test(t));
  const why = 'every customer\'s MAIL FROM record points here';
  if (records.length === 0) return line('fail', `${mailFromHost} has no SPF record (${why}): publish TXT ${suggestion}`);
  if (records.length > 1) return line('fail', `${mailFromHost} has ${records.length} SPF records; receivers treat that as an error: publish one, like ${suggestion}`);
  if (sources.length === 0) return line('warn', `${mailFromHost}: "${records[0]}"; no address of this appliance is known to check it against`);
  const results = await Promise.all(sources.map(async (ip) => {
    const result = await spf({ ip, sender: `postmaster@${mailFromHost}`, helo: ehlo, mta: ehlo, resolver: mailauthResolver(resolver), maxElapsedTime: 10_000 });
    return { ip, result: result.status.result };
  }));
  const refused = results.filter((r) => r.result !== 'pass');
  if (refused.length > 0) {
    return line('fail', `"${records[0]}" at ${mailFromHost} gives ${refused.map((r) => `${r.result} for ${r.ip}`).join(', ')} (${why}): `
      + `make it authorize them, like ${suggestion}`);
  }
  return line('pass', `"${records[0]}" at ${mailFromHost} authorizes ${sources.join(', ')}`);
}

async function inboundCheck(resolver: DnsResolver, inboundHost: string, host: string, own: string[]): Promise<CheckLine> {
  const line = (status: CheckStatus, reason: string): CheckLine => ({ check: 'inbound', subject: inboundHost, status, reason });
  const found = await addressesOf(resolver, inboundHost);
  if (found.addresses.length === 0) {
    return line('fail', found.error
      ? `${inboundHost}, the MX target of receiving domains, could not be resolved (${found.error})`
      : `${inboundHost}, the MX target of receiving domains, has no A or AAAA record: mail to them cannot arrive`);
  }
  const alias = await resolver.resolveCname(inboundHost).then((c) => c[0], () => undefined);
  if (alias) return line('warn', `${inboundHost} is an alias of ${name(alias)}; an MX target must be a host name with its own A/AAAA (RFC 2181, 10.3)`);
  const here = found.addresses.filter((a) => own.includes(a));
  if (here.length === 0) {
    return line('warn', `${inboundHost} resolves to ${found.addresses.join(', ')}, none of ${host}'s addresses (${own.join(', ') || 'none'}): `
      + 'fine only when another machine relays inbound mail here');
  }
  return line('pass', `${inboundHost}, the MX target of receiving domains, resolves here (${here.join(', ')})`);
}

async function portCheck(probe: PortProbe, target: string, timeoutMs: number): Promise<CheckLine> {
  const result = await probe(target, timeoutMs);
  if (result.ok) return { check: 'port25', subject: target, status: 'pass', reason: `connected to ${target} (${result.address}) in ${result.ms} ms: outbound port 25 is open` };
  return {
    check: 'port25', subject: target, status: 'fail',
    reason: `no connection to ${target}: ${result.reason}; mail cannot leave (many providers block outbound port 25 until asked)`,
  };
}
