import { createRequire } from 'node:module';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { lookupMemo } from '../../dns/lookup-memo.js';
import { isNotFound, type DnsResolver } from '../../dns/resolver.js';
import type { Db } from '../../storage/sql/index.js';
import { mtaStsPolicy, saveMtaStsPolicy, type MtaStsPolicyRow } from '../../storage/repos/index.js';

// MTA-STS (RFC 8461) for outbound mail: which policy a recipient domain asks for. mailauth parses
// the TXT record and the policy file and matches MX hosts; the HTTPS fetch is net/'s (through the
// address policy), and the cache is SQLite's (migration 023), so every outbound process and a
// restart keep the policy for its max_age. The TXT record is read every time (through the
// delivery resolver's cache): a new id means a new policy, fetched at once.

const require = createRequire(import.meta.url);
const mtaSts = require('mailauth/lib/mta-sts') as {
  resolvePolicy(domain: string, opts: { resolver: (name: string, type: string) => Promise<unknown> }): Promise<string | false>;
  parsePolicy(file: string): { mode: 'enforce' | 'testing' | 'none'; maxAge: number; mx?: string[] };
  validateMx(mx: string, policy: { mode: string; mx?: string[] }): { valid: boolean };
};

/** A policy in force for a domain, as delivery applies it and TLS-RPT reports it. */
export interface StsPolicy {
  domain: string;
  id: string;
  mode: 'enforce' | 'testing' | 'none';
  mx: string[];
  text: string;
}

export type StsLookup =
  | { kind: 'none' }
  | { kind: 'policy'; policy: StsPolicy }
  /** The domain publishes a policy that could not be fetched and none is cached: delivery goes on as without one. */
  | { kind: 'fetch_error'; domain: string; reason: string };

/** Fetches `https://mta-sts.<domain>/.well-known/mta-sts.txt` (net/outbound-tls.ts, handed in by bin/). */
export type MtaStsPolicyFetcher = (domain: string) => Promise<{ kind: 'ok'; body: string } | { kind: 'failed'; reason: string }>;

export interface MtaStsDeps {
  db: Db;
  resolver: DnsResolver;
  fetch: MtaStsPolicyFetcher;
  clock: Clock;
  logger: Logger;
  /** In-process memo of lookups; 0 asks DNS (and the cache) at every delivery. */
  memoMs: number;
}

/** How long a failed fetch is not tried again for a domain with no cached policy. */
const FETCH_RETRY_MS = 5 * 60_000;

/** MX host matches a policy's `mx:` patterns (RFC 8461 section 4.1, mailauth's matcher). */
export const mxMatches = (host: string, policy: StsPolicy): boolean => mtaSts.validateMx(host, { mode: policy.mode, mx: policy.mx }).valid;

export function mtaStsPolicies(deps: MtaStsDeps): (domain: string) => Promise<StsLookup> {
  const failedFetch = new Map<string, { until: number; id: string; reason: string }>();
  const lookup = async (domain: string): Promise<StsLookup> => {
    const now = deps.clock.now();
    const cached = await mtaStsPolicy(deps.db, domain);
    const live = cached && Date.parse(cached.expires_at) > now.getTime() ? cached : undefined;
    let id: string | false;
    try {
      id = await mtaSts.resolvePolicy(domain, { resolver: (name) => deps.resolver.resolveTxt(name) });
    } catch (err) {
      // DNS trouble (or several records): a cached policy still applies (RFC 8461 section 5.1).
      if (!isNotFound(err)) deps.logger.warn({ domain, err: (err as Error).message }, 'MTA-STS TXT lookup failed');
      return live ? { kind: 'policy', policy: fromRow(live) } : { kind: 'none' };
    }
    if (!id) return live ? { kind: 'policy', policy: fromRow(live) } : { kind: 'none' };
    if (live && live.policy_id === id) return { kind: 'policy', policy: fromRow(live) };
    const failed = failedFetch.get(domain);
    if (failed && failed.id === id && failed.until > now.getTime()) {
      return live ? { kind: 'policy', policy: fromRow(live) } : { kind: 'fetch_error', domain, reason: failed.reason };
    }
    const fetched = await fetchPolicy(deps, domain, id);
    if (fetched.kind === 'ok') {
      failedFetch.delete(domain);
      await saveMtaStsPolicy(deps.db, fetched.row);
      deps.logger.info({ domain, policyId: id, mode: fetched.row.mode, maxAge: fetched.row.max_age }, 'MTA-STS policy fetched');
      return { kind: 'policy', policy: fromRow(fetched.row) };
    }
    failedFetch.set(domain, { until: now.getTime() + FETCH_RETRY_MS, id, reason: fetched.reason });
    if (failedFetch.size > 10_000) failedFetch.clear();
    deps.logger.warn({ domain, policyId: id, reason: fetched.reason, cached: !!live }, 'MTA-STS policy fetch failed');
    return live ? { kind: 'policy', policy: fromRow(live) } : { kind: 'fetch_error', domain, reason: fetched.reason };
  };
  // A failed lookup is not kept (a failed fetch is, above, for FETCH_RETRY_MS).
  const memoized = lookupMemo(lookup, { ttlMs: deps.memoMs, maxEntries: 10_000, now: () => performance.now() });
  return (domain) => memoized(domain.toLowerCase());
}

async function fetchPolicy(deps: MtaStsDeps, domain: string, id: string): Promise<{ kind: 'ok'; row: MtaStsPolicyRow } | { kind: 'failed'; reason: string }> {
  const fetched = await deps.fetch(domain);
  if (fetched.kind === 'failed') return fetched;
  let parsed;
  try {
    parsed = mtaSts.parsePolicy(fetched.body);
  } catch (err) {
    return { kind: 'failed', reason: `invalid policy: ${(err as Error).message}` };
  }
  const now = deps.clock.now();
  return {
    kind: 'ok',
    row: {
      domain, policy_id: id, mode: parsed.mode, max_age: parsed.maxAge, mx: JSON.stringify(parsed.mx ?? []),
      policy_text: fetched.body, fetched_at: now.toISOString(), expires_at: new Date(now.getTime() + parsed.maxAge * 1000).toISOString(),
    },
  };
}

function fromRow(row: MtaStsPolicyRow): StsPolicy {
  return { domain: row.domain, id: row.policy_id, mode: row.mode, mx: JSON.parse(row.mx) as string[], text: row.policy_text };
}
