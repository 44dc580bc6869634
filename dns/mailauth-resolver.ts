import type { DNSResolver } from 'mailauth';
import type { DnsResolver } from './resolver.js';

// mailauth's checks (SPF, DKIM, DMARC, ARC) with svc's injected resolver: received mail is
// authenticated with it (mta/inbound/authenticate.ts) and the DNS self-check evaluates SPF with it.

/** mailauth asks by record type (dns.promises.resolve's shape); svc's resolver answers by method. */
export function mailauthResolver(resolver: DnsResolver): DNSResolver {
  return async (name: string, rrtype: string) => {
    switch (rrtype.toUpperCase()) {
      case 'TXT':
        return resolver.resolveTxt(name);
      case 'A':
        return resolver.resolve4(name);
      case 'AAAA':
        return resolver.resolve6(name);
      case 'MX':
        return (await resolver.resolveMx(name)) as never;
      case 'CNAME':
        return resolver.resolveCname(name);
      case 'NS':
        return resolver.resolveNs(name);
      case 'PTR':
        return resolver.reverse(addressOfPtrName(name));
      default:
        throw Object.assign(new Error(`record type ${rrtype} is not looked up`), { code: 'ENOTIMP' });
    }
  };
}

/** 4.3.2.1.in-addr.arpa → 1.2.3.4; the 32 nibbles of ip6.arpa → the IPv6 address. */
export function addressOfPtrName(name: string): string {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.');
  if (labels.slice(-2).join('.') === 'in-addr.arpa' && labels.length === 6) return labels.slice(0, 4).reverse().join('.');
  if (labels.slice(-2).join('.') === 'ip6.arpa' && labels.length === 34) {
    const hex = labels.slice(0, 32).reverse().join('');
    return hex.match(/.{4}/g)!.join(':');
  }
  throw Object.assign(new Error(`not a reverse-lookup name: ${name}`), { code: 'ENOTFOUND' });
}
