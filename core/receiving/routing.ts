import { domainToASCII } from 'node:url';
import type { MailboxPolicy, ReceivingDomain, ReceivingDomains, VerpChecker } from './ports.js';

// RCPT TO decides by address alone. svc stores mail for its receiving domains and reads the reports
// that come back to its own return paths (only those whose tag it signed: a forged one is refused
// here, before any data) and feedback address; it forwards nothing, so any other
// address is relaying and is refused. Address forms that older MTAs rewrote into a relay (the
// percent hack, bang paths, source routes) and quoted local parts are refused outright: no real
// mailbox of a receiving domain needs them, and refusing is simpler than proving them harmless.
//
// postmaster (RFC 5321 section 4.5.1) is always accepted: at every receiving domain it is that
// domain's mail, stored for its team like any address and claimed whatever the mailbox policy;
// at the appliance's own host names (and the bare `postmaster` the RFC also requires) it is the
// operator's, and no team holds those names, so it is kept apart from every team's mail (the
// listener keeps the raw message under the spool's postmaster/ folder and logs a line).

export type RecipientRoute =
  | { kind: 'received'; address: string; domain: ReceivingDomain; claimed: boolean }
  | { kind: 'dsn'; address: string; emailId: string; recipientId: string }
  | { kind: 'arf'; address: string }
  | { kind: 'postmaster'; address: string }
  | { kind: 'refused'; code: 450 | 550 | 553; message: string };

export interface RoutingDeps {
  domains: ReceivingDomains;
  returnPaths: VerpChecker;
  mailboxes: MailboxPolicy;
  /** Lower-cased feedback address (ARF reports). */
  feedbackAddress: string;
  /** The appliance's own host names (lower-case A-labels): postmaster there is the operator's. */
  ownHosts: ReadonlySet<string>;
}

const POSTMASTER = 'postmaster';

export const relayDenied: RecipientRoute = { kind: 'refused', code: 550, message: '5.7.1 Relay access denied' };

/**
 * The refusal for a domain svc does not receive for, saying why when svc knows the domain: one
 * added but not verified yet is a temporary refusal (450: the sender retries, and the mail arrives
 * once the domain's owner finishes), one with receiving off a permanent one.
 */
async function notReceiving(domains: ReceivingDomains, name: string): Promise<RecipientRoute> {
  switch (await domains.whyNotReceiving?.(name)) {
    case 'unverified':
      return { kind: 'refused', code: 450, message: `4.7.1 ${name} is not verified on this server yet, try again later` };
    case 'receiving_off':
      return { kind: 'refused', code: 550, message: `5.7.1 ${name} does not receive mail on this server (receiving is off)` };
    default:
      return relayDenied;
  }
}

const badSyntax = (why: string): RecipientRoute => ({ kind: 'refused', code: 553, message: `5.1.3 Bad recipient address syntax: ${why}` });

/** Splits and checks an RCPT address; answers the refusal when it is not a plain local@domain. */
export function splitAddress(raw: string): { local: string; domain: string } | RecipientRoute {
  const address = raw.trim();
  if (address === '') return badSyntax('empty address');
  if (address.startsWith('"') || address.includes('"')) return badSyntax('quoted local parts are not accepted');
  if (address.startsWith('@') || address.includes(':') || address.includes(',')) return badSyntax('source routes are not accepted');
  const at = address.indexOf('@');
  if (at <= 0 || at !== address.lastIndexOf('@')) return badSyntax('expected exactly one @');
  const local = address.slice(0, at);
  const domainPart = address.slice(at + 1);
  if (/[%!]/.test(local)) return relayDenied;
  if (local.length > 64 || /[\s\\<>()[\];]/.test(local)) return badSyntax('local part');
  if (domainPart.startsWith('[')) return relayDenied;
  const domain = domainToASCII(domainPart.toLowerCase());
  if (!domain || domain.length > 253 || domain.endsWith('.') || !domain.includes('.')) return relayDenied;
  return { local, domain };
}

/** Where mail for this address goes, or the SMTP refusal. Lookups may throw: the caller answers 451. */
export async function routeRecipient(deps: RoutingDeps, raw: string): Promise<RecipientRoute> {
  if (raw.trim().toLowerCase() === POSTMASTER) return { kind: 'postmaster', address: raw.trim() };
  const parts = splitAddress(raw);
  if ('kind' in parts) return parts;
  const address = `${parts.local}@${parts.domain}`;
  if (address.toLowerCase() === deps.feedbackAddress) return { kind: 'arf', address };
  if (parts.local.toLowerCase() === POSTMASTER) return routePostmaster(deps, address, parts.domain);
  const verp = await deps.returnPaths(address);
  if (verp?.ok) return { kind: 'dsn', address, emailId: verp.emailId, recipientId: verp.recipientId };
  if (verp) return { kind: 'refused', code: 550, message: `5.7.1 Invalid bounce address tag (${verp.reason})` };
  const domain = await deps.domains.receivingDomain(parts.domain);
  if (!domain) return notReceiving(deps.domains, parts.domain);
  return { kind: 'received', address, domain, claimed: await deps.mailboxes.claims(domain, address) };
}

/** postmaster@ the appliance's own host is the operator's; at a receiving domain, always claimed. */
async function routePostmaster(deps: RoutingDeps, address: string, domainName: string): Promise<RecipientRoute> {
  if (deps.ownHosts.has(domainName)) return { kind: 'postmaster', address };
  const domain = await deps.domains.receivingDomain(domainName);
  return domain ? { kind: 'received', address, domain, claimed: true } : notReceiving(deps.domains, domainName);
}
