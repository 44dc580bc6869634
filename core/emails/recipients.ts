import { checkRecipientDomain } from '../../dns/recipient-domain.js';
import type { DnsResolver } from '../../dns/resolver.js';
import type { EmailsRepo } from '../../storage/repos/index.js';
import { isSuppressed, type SuppressionsRepo } from '../suppressions/index.js';
import { ServiceError } from '../errors.js';
import type { Region } from '../regions.js';
import { addressKey } from './addresses.js';
import type { RecipientInput } from './types.js';
import { daysBefore } from '../time.js';

// Pre-send rules 4 and 6 and the suppression list, per recipient.

export type InvalidCause = 'reserved_domain' | 'typo_domain' | 'no_mail' | 'dead_address';

export type RecipientFate =
  | { kind: 'deliver' }
  | { kind: 'invalid'; cause: InvalidCause; suggestion?: string }
  | { kind: 'suppressed'; origin: string };

export interface RecipientCheckDeps {
  resolver: DnsResolver;
  emails: Pick<EmailsRepo, 'rejections'>;
  suppressions: Pick<SuppressionsRepo, 'byEmailKey'>;
  simulatorDomain: string;
  /** How long a "no such mailbox" bounce keeps refusing the address. */
  deadAddressDays: number;
}

export const isSimulator = (domain: string, simulatorDomain: string) => !!simulatorDomain && domain === simulatorDomain;

/**
 * Rule 4 for every recipient: reserved names and IP literals, provider typos, domains that take
 * no mail, recently bounced non-existent mailboxes. DNS that cannot answer now refuses nobody.
 * Then the team's suppression list. The simulator's suppressed@ acts as a listed address.
 */
export async function recipientFates(
  deps: RecipientCheckDeps, teamId: string, recipients: RecipientInput[], now: Date,
  // A batch passes one map for all its emails, so each recipient domain is judged once.
  byDomain = new Map<string, Promise<RecipientFate>>(),
): Promise<RecipientFate[]> {
  const since = daysBefore(now, deps.deadAddressDays);
  return Promise.all(recipients.map(async (r): Promise<RecipientFate> => {
    if (isSimulator(r.domain, deps.simulatorDomain)) {
      return r.address.split('@')[0]!.toLowerCase() === 'suppressed' ? { kind: 'suppressed', origin: 'bounce' } : { kind: 'deliver' };
    }
    if (!byDomain.has(r.domain)) byDomain.set(r.domain, domainFate(deps.resolver, r.domain));
    const domainVerdict = await byDomain.get(r.domain)!;
    if (domainVerdict.kind !== 'deliver') return domainVerdict;
    // The team's own list first: a send to a listed address is accepted and suppressed (spec
    // States). Then a recently non-existent mailbox is refused outright.
    const listed = await isSuppressed(deps.suppressions, teamId, r.address);
    if (listed) return { kind: 'suppressed', origin: listed.origin };
    if (await isDeadAddress(deps.emails, addressKey(r.address), teamId, since)) return { kind: 'invalid', cause: 'dead_address' };
    return { kind: 'deliver' };
  }));
}

/**
 * Dead means the remote server itself answered "no such mailbox" to svc's own attempts: for this
 * team, or for at least two teams, so that no single tenant can make an address dead for the others
 * (a tenant who controls a domain's MX can reject its addresses at will). Reports never count.
 */
async function isDeadAddress(emails: Pick<EmailsRepo, 'rejections'>, address: string, teamId: string, since: string): Promise<boolean> {
  const seen = await emails.rejections(address, teamId, since);
  return seen.own || seen.teams >= crossTeamEvidence;
}

const crossTeamEvidence = 2;

async function domainFate(resolver: DnsResolver, domain: string): Promise<RecipientFate> {
  const verdict = await checkRecipientDomain(resolver, domain);
  if (verdict.ok) return { kind: 'deliver' };
  switch (verdict.cause) {
    case 'reserved_domain':
    case 'ip_literal':
      return { kind: 'invalid', cause: 'reserved_domain' };
    case 'likely_typo':
      return { kind: 'invalid', cause: 'typo_domain', suggestion: verdict.suggestion };
    case 'no_mail':
    case 'no_domain':
      return { kind: 'invalid', cause: 'no_mail' };
  }
}

/** A single send whose every recipient was refused: 422 naming the (first) cause. */
export function allRecipientsInvalid(recipients: RecipientInput[], fates: RecipientFate[]): ServiceError {
  const index = fates.findIndex((f) => f.kind === 'invalid');
  const fate = fates[index] as Extract<RecipientFate, { kind: 'invalid' }>;
  const address = recipients[index]!.address;
  const details: Record<string, unknown> = { reason: 'invalid_recipient', cause: fate.cause, recipient: address };
  if (fate.suggestion) details.suggestion = fate.suggestion;
  const hint = fate.suggestion ? ` Did you mean ${address.split('@')[0]}@${fate.suggestion}?` : '';
  return new ServiceError(422, 'validation_error', `The recipient ${address} cannot receive mail (${fate.cause}).${hint}`, { details, errors: [{ path: 'to', message: fate.cause }] });
}

/**
 * Rule 6: in a region still in the sending sandbox, only the simulator and addresses on a domain
 * verified on the service (subdomains included) may receive. svc has no per-person verified
 * identities, so `verified_identity` is named as allowed but nothing matches it yet.
 */
export function checkSandbox(region: Region, recipients: RecipientInput[], verifiedDomains: readonly string[], simulatorDomain: string): void {
  if (!region.sandbox) return;
  for (const r of recipients) {
    if (isSimulator(r.domain, simulatorDomain)) continue;
    if (verifiedDomains.some((d) => r.domain === d || r.domain.endsWith(`.${d}`))) continue;
    throw new ServiceError(403, 'validation_error', `The ${region.name} region is in the sending sandbox: ${r.address} is not a verified identity, the mailbox simulator, or on a verified domain.`, {
      details: { recipient: r.address, region: region.name, allowed: ['verified_identity', 'verified_domain', 'simulator'] },
    });
  }
}
