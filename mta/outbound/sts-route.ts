import { mxMatches, type StsLookup, type StsPolicy } from './mta-sts.js';
import type { Route } from './routes.js';
import type { TlsResult } from './tls-results.js';

// A route under a recipient domain's MTA-STS policy (RFC 8461 section 4):
//   enforce → only the MX hosts the policy names, each over TLS with a certificate valid for the
//             host name (the target's `enforced` TLS); none left → a temporary failure (deferred,
//             never bounced at once, never delivered to another host or in plaintext);
//   testing → the route unchanged; each session's TLS result is counted for TLS-RPT;
//   none    → nothing changes.

/** What TLS-RPT needs to know about the policy a delivery went under. */
export interface StsApplied {
  domain: string;
  /** null: the domain publishes a policy that could not be fetched. */
  policy: StsPolicy | null;
}

export function applyStsPolicy(route: Route, lookup: StsLookup): Route {
  if (route.kind !== 'targets') return route;
  if (lookup.kind === 'none') return route;
  if (lookup.kind === 'fetch_error') return { ...route, sts: { domain: lookup.domain, policy: null } };
  const { policy } = lookup;
  const sts: StsApplied = { domain: policy.domain, policy };
  if (policy.mode === 'none') return route;
  if (policy.mode === 'testing') return { ...route, sts };
  const allowed = route.targets.filter((t) => mxMatches(t.hostname, policy)).map((t) => ({ ...t, tls: 'enforced' as const }));
  if (!allowed.length) {
    const hosts = [...new Set(route.targets.map((t) => t.hostname))].join(', ');
    return { kind: 'temporary', error: `451 4.7.5 no MX host of ${policy.domain} (${hosts}) matches its MTA-STS policy (mode enforce)`, sts, unmatched: [...new Set(route.targets.map((t) => t.hostname))] };
  }
  return { kind: 'targets', targets: allowed, sts };
}

/** The result a session counts as under the policy: in `testing`, an MX outside the policy fails validation. */
export function resultUnderPolicy(applied: StsApplied, hostname: string, result: TlsResult): TlsResult {
  if (result !== 'success' || !applied.policy || applied.policy.mode !== 'testing') return result;
  return mxMatches(hostname, applied.policy) ? result : 'validation-failure';
}
