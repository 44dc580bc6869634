import { isNotFound, type DnsResolver } from './resolver.js';

export interface MailHost {
  exchange: string;
  priority: number;
}

/** Where mail for a domain goes, in delivery order, or why it cannot go anywhere. */
export type MailRoute =
  | { kind: 'hosts'; hosts: MailHost[]; implicit: boolean }
  | { kind: 'null_mx' }
  | { kind: 'no_domain' }
  | { kind: 'no_mail' }
  | { kind: 'temporary'; error: string };

/**
 * MX lookup per RFC 5321 §5.1: MX records by preference; no MX but an address record means the
 * domain itself is the host (implicit MX); a single "." MX is RFC 7505's null MX: no mail at all.
 */
export async function resolveMailRoute(resolver: DnsResolver, domain: string): Promise<MailRoute> {
  let mx: MailHost[];
  try {
    mx = await resolver.resolveMx(domain);
  } catch (err) {
    if (!isNotFound(err)) return { kind: 'temporary', error: codeOf(err) };
    if (codeOf(err) === 'ENOTFOUND') return { kind: 'no_domain' };
    return implicitRoute(resolver, domain);
  }
  if (mx.length === 0) return implicitRoute(resolver, domain);
  if (mx.some((h) => h.exchange === '' || h.exchange === '.')) return { kind: 'null_mx' };
  const hosts = [...mx].sort((a, b) => a.priority - b.priority).map((h) => ({ exchange: h.exchange.replace(/\.$/, '').toLowerCase(), priority: h.priority }));
  return { kind: 'hosts', hosts, implicit: false };
}

async function implicitRoute(resolver: DnsResolver, domain: string): Promise<MailRoute> {
  const lookups = await Promise.allSettled([resolver.resolve4(domain), resolver.resolve6(domain)]);
  if (lookups.some((r) => r.status === 'fulfilled' && r.value.length > 0)) {
    return { kind: 'hosts', hosts: [{ exchange: domain.toLowerCase(), priority: 0 }], implicit: true };
  }
  const failure = lookups.find((r): r is PromiseRejectedResult => r.status === 'rejected' && !isNotFound(r.reason));
  return failure ? { kind: 'temporary', error: codeOf(failure.reason) } : { kind: 'no_mail' };
}

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException)?.code ?? String(err);
