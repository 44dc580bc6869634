import type { DnsResolver } from '../../dns/resolver.js';
import type { AuthSummary } from './authenticate.js';

// Bounds on what one received message can make SPF/DKIM/DMARC/ARC checking (mailauth) cost.
// - mailauth's header parsing grows faster than linearly with the size of the header section
//   (measured: a 2.9 MB folded header took 6.8 s of CPU, 0.7 MB took 0.2 s), and the deadline
//   around it stops the wait, not the work. A header section past HEADER_LIMIT is not checked: it
//   is past mailparser's own limit for a header block too, so the message is kept as parse_failed.
// - mailauth looks up one DKIM key per signature (DKIM-Signature, ARC-Message-Signature, ARC-Seal)
//   and a message can carry thousands: past KEY_LOOKUP_LIMIT key lookups of one message fail as
//   temporary errors instead of reaching DNS (OpenDKIM verifies 3 signatures by default).

/** mailparser's (mailsplit's) largest header block: 1 MiB. */
export const HEADER_LIMIT = 1024 * 1024;
export const KEY_LOOKUP_LIMIT = 20;

/** Octets of the header section (up to the empty line; the whole message when there is none). */
export function headerSectionSize(raw: Buffer): number {
  const end = raw.indexOf('\r\n\r\n');
  return end === -1 ? raw.length : end + 2;
}

/** The summary kept when the checks were not run at all. */
export function notAuthenticated(reason: string): AuthSummary {
  return { spf: null, dkim: [], dmarc: null, arc: null, authentication_results: null, error: reason };
}

/** The resolver for one message's checks: DKIM key lookups (`…._domainkey.…` TXT) past the limit fail. */
export function withKeyLookupBudget(resolver: DnsResolver, limit = KEY_LOOKUP_LIMIT): DnsResolver {
  let left = limit;
  return {
    resolveMx: (name) => resolver.resolveMx(name),
    resolveTxt: (name) => {
      if (/\._domainkey\./i.test(name) && --left < 0) {
        return Promise.reject(Object.assign(new Error(`more than ${limit} DKIM key lookups for one message`), { code: 'ETIMEOUT' }));
      }
      return resolver.resolveTxt(name);
    },
    resolveCname: (name) => resolver.resolveCname(name),
    resolve4: (name) => resolver.resolve4(name),
    resolve6: (name) => resolver.resolve6(name),
    resolveNs: (name) => resolver.resolveNs(name),
    reverse: (ip) => resolver.reverse(ip),
  };
}
