import type { LookupAddress } from 'node:dns';
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { isNotFound, type DnsResolver } from '../dns/resolver.js';

// Where webhook requests may go. Only globally routable unicast addresses; with `allowPrivate`
// an operator also lets loopback and private ranges through (on-premise receivers), never
// link-local or cloud metadata, never a name that does not resolve. The same judgement runs when
// an endpoint is saved and again, on the addresses actually connected to, at every connection.

/** `allowable`: refused only because the operator's switch for private ranges is off. */
export type AddressVerdict = { ok: true } | { ok: false; reason: string; allowable?: boolean };

/** Cloud metadata services: refused whatever the operator allows. */
const metadataAddresses = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254']);

const privateRanges = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);

/** Judges one IP address (already parsed from a URL or a DNS answer). */
export function judgeAddress(address: string, allowPrivate: boolean): AddressVerdict {
  if (!ipaddr.isValid(address)) return { ok: false, reason: `${address} is not an IP address` };
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).zoneId) return { ok: false, reason: 'a scoped IPv6 address is not routable' };
  const normal = parsed.kind() === 'ipv6' ? (parsed as ipaddr.IPv6).toRFC5952String() : parsed.toString();
  if (metadataAddresses.has(normal)) return { ok: false, reason: `${normal} is a cloud metadata address` };
  const range = parsed.range();
  if (range === 'unicast') return { ok: true };
  if (allowPrivate && privateRanges.has(range)) return { ok: true };
  return { ok: false, reason: `${normal} is in the ${range} range`, ...(privateRanges.has(range) ? { allowable: true } : {}) };
}

export interface ResolvedHost {
  addresses: LookupAddress[];
}

export class UnroutableError extends Error {
  readonly code = 'ERR_SVC_UNROUTABLE';
  /** Refused only for a loopback or private address: the operator's `*_allow_private` switch would let it through. */
  constructor(message: string, readonly allowable = false) {
    super(message);
  }
}

/** Every address of a host name (A and AAAA through the injected resolver), each judged. */
export async function resolveAllowed(resolver: DnsResolver, hostname: string, allowPrivate: boolean): Promise<LookupAddress[]> {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  const literal = ipLiteral(name);
  const addresses: LookupAddress[] = literal
    ? [literal]
    : name === 'localhost' || name.endsWith('.localhost')
      ? [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]
      : await lookupBoth(resolver, name);
  if (addresses.length === 0) throw new UnroutableError(`${name} does not resolve`);
  const refused = addresses.map(({ address }) => judgeAddress(address, allowPrivate))
    .filter((v): v is Extract<AddressVerdict, { ok: false }> => !v.ok);
  // A metadata address beside a private one is named first: no switch would let that host through.
  const worst = refused.find((v) => !v.allowable) ?? refused[0];
  if (worst) throw new UnroutableError(`${name} resolves to a refused address: ${worst.reason}`, !!worst.allowable);
  return addresses;
}

/** An IP literal as the WHATWG URL parser leaves it (decimal, octal and hex IPv4 forms normalised). */
function ipLiteral(host: string): LookupAddress | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIPv4(bare) && ipaddr.IPv4.isValidFourPartDecimal(bare)) return { address: bare, family: 4 };
  if (bare.includes(':') && ipaddr.IPv6.isValid(bare)) return { address: bare, family: 6 };
  if (/^[0-9.]+$|^0x/i.test(bare)) return { address: bare, family: 4 };
  return undefined;
}

async function lookupBoth(resolver: DnsResolver, name: string): Promise<LookupAddress[]> {
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
  const out: LookupAddress[] = [];
  for (const [result, family] of [[v4, 4], [v6, 6]] as const) {
    if (result.status === 'fulfilled') out.push(...result.value.map((address) => ({ address, family })));
    else if (!isNotFound(result.reason)) throw new UnroutableError(`${name} could not be resolved (${(result.reason as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return out;
}

export interface CheckedUrl {
  href: string;
  hostname: string;
}

/** The setting that lets webhook endpoints on loopback and private addresses through (config/schema.ts). */
const webhooksPrivateHint = 'the operator allows loopback and private endpoints for local testing with the '
  + 'webhooks_allow_private setting (SVC_WEBHOOKS_ALLOW_PRIVATE=true)';

/**
 * checkEndpointUrl as the webhooks area asks it: a verdict rather than a thrown refusal. A URL
 * refused only for its loopback or private address names the setting that would allow it.
 */
export function endpointUrlPolicy(resolver: DnsResolver, allowPrivate: boolean) {
  return async (raw: string): Promise<{ ok: true; href: string } | { ok: false; reason: string }> => {
    try {
      return { ok: true, href: (await checkEndpointUrl(raw, resolver, allowPrivate)).href };
    } catch (err) {
      if (err instanceof UnroutableError) return { ok: false, reason: err.allowable ? `${err.message}; ${webhooksPrivateHint}` : err.message };
      throw err;
    }
  };
}

/** Parses and judges an endpoint URL; the message says why it is refused. */
export async function checkEndpointUrl(raw: string, resolver: DnsResolver, allowPrivate: boolean): Promise<CheckedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnroutableError('must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnroutableError('must use http or https');
  if (url.username || url.password) throw new UnroutableError('must not carry a user name or password');
  if (raw.length > 2048) throw new UnroutableError('must be at most 2048 characters');
  await resolveAllowed(resolver, url.hostname, allowPrivate);
  return { href: url.href, hostname: url.hostname };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls connections: resolves through the injected resolver, refuses the whole
 * host if any address is refused (so a DNS answer that changed since the endpoint was saved is
 * caught at connect time), and hands the connection only the addresses it judged.
 */
export function pinnedLookup(resolver: DnsResolver, allowPrivate: boolean) {
  return (hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback): void => {
    resolveAllowed(resolver, hostname, allowPrivate).then((addresses) => {
      const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
      const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
      if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} has no usable address`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return callback(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    }, (err: Error) => callback(Object.assign(err, { code: (err as NodeJS.ErrnoException).code ?? 'ENOTFOUND' }), '', 0));
  };
}
