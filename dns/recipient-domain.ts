import { isIP } from 'node:net';
import { resolveMailRoute } from './mx.js';
import type { DnsResolver } from './resolver.js';

export type RecipientDomainVerdict =
  | { ok: true }
  | { ok: false; cause: 'reserved_domain' | 'ip_literal' | 'likely_typo' | 'no_mail' | 'no_domain'; suggestion?: string }
  /** DNS could not answer now: not a reason to refuse the recipient. */
  | { ok: true; unverified: string };

// RFC 2606 / RFC 6761 names that never receive mail, and the documentation domains.
const reservedSuffixes = ['local', 'test', 'invalid', 'example', 'localhost', 'internal'];
const reservedDomains = ['example.com', 'example.net', 'example.org', 'localhost'];

// Major mailbox providers, for "did you mean" on a near miss.
const providers = [
  'gmail.com', 'googlemail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'live.com', 'msn.com',
  'icloud.com', 'me.com', 'aol.com', 'protonmail.com', 'proton.me', 'gmx.com', 'gmx.de', 'web.de',
  'yandex.ru', 'mail.ru', 'qq.com', '163.com', 'comcast.net', 'verizon.net', 'att.net', 'yahoo.co.uk',
  'hotmail.co.uk', 'btinternet.com', 'orange.fr', 'free.fr', 'libero.it', 'fastmail.com', 'zoho.com',
  'mail.com', 'gmx.net', 'ymail.com', 'rocketmail.com', 'hotmail.fr', 'outlook.de', 'live.co.uk',
];

/** Offline checks first (reserved names, IP literals, provider typos), then whether DNS takes mail. */
export async function checkRecipientDomain(resolver: DnsResolver, rawDomain: string): Promise<RecipientDomainVerdict> {
  const offline = checkOffline(rawDomain);
  if (offline) return offline;
  const route = await resolveMailRoute(resolver, rawDomain.toLowerCase());
  switch (route.kind) {
    case 'hosts':
      return { ok: true };
    case 'null_mx':
    case 'no_mail':
      return { ok: false, cause: 'no_mail' };
    case 'no_domain':
      return { ok: false, cause: 'no_domain' };
    case 'temporary':
      return { ok: true, unverified: route.error };
  }
}

export function checkOffline(rawDomain: string): RecipientDomainVerdict | undefined {
  const domain = rawDomain.toLowerCase().replace(/\.$/, '');
  if (domain.startsWith('[') || isIP(domain)) return { ok: false, cause: 'ip_literal' };
  const labels = domain.split('.');
  if (reservedDomains.some((r) => domain === r || domain.endsWith(`.${r}`)) || reservedSuffixes.includes(labels.at(-1)!)) {
    return { ok: false, cause: 'reserved_domain' };
  }
  const suggestion = likelyTypo(domain);
  if (suggestion) return { ok: false, cause: 'likely_typo', suggestion };
  return undefined;
}

/**
 * A provider one edit away (two for names of 11+ characters), but not a provider itself, is taken
 * as a typo. Names of 7 characters or fewer are too close to real domains to guess at.
 */
export function likelyTypo(domain: string): string | undefined {
  // A batch names the same few domains again and again; the comparison is 37 edit distances.
  if (typoVerdicts.has(domain)) return typoVerdicts.get(domain);
  const verdict = closestProvider(domain);
  if (typoVerdicts.size >= 10_000) typoVerdicts.clear();
  typoVerdicts.set(domain, verdict);
  return verdict;
}

const typoVerdicts = new Map<string, string | undefined>();

function closestProvider(domain: string): string | undefined {
  if (providers.includes(domain)) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of providers) {
    const distance = editDistance(domain, name, 2);
    const allowed = name.length <= 7 ? 0 : name.length <= 10 ? 1 : 2;
    if (distance <= allowed && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

// Damerau-Levenshtein (optimal string alignment), stopping early past `limit`.
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
