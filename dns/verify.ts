import { isNotFound, type DnsResolver } from './resolver.js';

/** One record svc asked a customer to publish, as DNS should answer it. */
export interface RecordCheck {
  type: 'TXT' | 'CNAME' | 'MX';
  /** Absolute name, no trailing dot. */
  fqdn: string;
  /** TXT: the text once its strings are joined; CNAME and MX: the target host. */
  expected: string;
  /** TXT only: `dkim_key` compares the p= tag of a DKIM key record; `exact` the whole text. */
  match?: 'dkim_key' | 'exact';
}

/**
 * `absent` is DNS's answer "not there", with what it answered at that name instead (none when the
 * name has no such record); `error` means DNS could not answer now.
 */
export type CheckOutcome = { kind: 'found' } | { kind: 'absent'; answers: string[] } | { kind: 'error'; code: string };

/** Asks DNS (never a cache: verification must see the zone as it is now) whether a record is published. */
export async function checkRecord(resolver: DnsResolver, check: RecordCheck): Promise<CheckOutcome> {
  try {
    const answers = await lookup(resolver, check);
    return matches(check, answers) ? { kind: 'found' } : { kind: 'absent', answers };
  } catch (err) {
    if (isNotFound(err)) return { kind: 'absent', answers: [] };
    return { kind: 'error', code: (err as NodeJS.ErrnoException)?.code ?? String(err) };
  }
}

async function lookup(resolver: DnsResolver, check: RecordCheck): Promise<string[]> {
  switch (check.type) {
    case 'TXT':
      return (await resolver.resolveTxt(check.fqdn)).map(joinTxt);
    case 'CNAME':
      return resolver.resolveCname(check.fqdn);
    case 'MX':
      return (await resolver.resolveMx(check.fqdn)).map((mx) => mx.exchange);
  }
}

function matches(check: RecordCheck, answers: string[]): boolean {
  if (check.type !== 'TXT') return answers.some((host) => sameHost(host, check.expected));
  if (check.match === 'dkim_key') {
    const wanted = dkimKeyOf(check.expected);
    return wanted !== undefined && answers.some((txt) => dkimKeyOf(txt) === wanted);
  }
  const wanted = collapse(check.expected);
  return answers.some((txt) => collapse(txt) === wanted);
}

/** A TXT record's character-strings make one text (RFC 7208 §3.3, RFC 6376 §3.6.2.2). */
export const joinTxt = (strings: string[]): string => strings.join('');

/**
 * The public key of a DKIM key record (RFC 6376 §3.6.1): the p= tag without whitespace. A record
 * with a v= other than DKIM1, or a k= other than rsa, is not ours.
 */
export function dkimKeyOf(record: string): string | undefined {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    tags.set(part.slice(0, eq).trim(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  if (tags.has('v') && tags.get('v') !== 'DKIM1') return undefined;
  if (tags.has('k') && tags.get('k')!.toLowerCase() !== 'rsa') return undefined;
  const key = tags.get('p');
  return key ? key : undefined;
}

export const sameHost = (a: string, b: string): boolean => normalHost(a) === normalHost(b);

export const normalHost = (host: string): string => host.trim().toLowerCase().replace(/\.$/, '');

const collapse = (text: string) => text.trim().replace(/\s+/g, ' ');
