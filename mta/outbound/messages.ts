import type { SendingDomain, SendingDomains } from '../../core/emails/index.js';
import type { Clock } from '../../core/clock.js';
import type { EmailsRepo } from '../../storage/repos/index.js';
import type { EmailAttachmentRow, EmailRow } from '../../storage/repos/index.js';
import type { DkimKey } from './dkim.js';
import type { TrackingInput } from './compose.js';
import type { MessageBuilder } from './signing-pool.js';

// The signed message of each email, built once and shared by its recipients (and their
// retries while it stays in memory), plus the sending domain it is signed for. An email whose
// domain has open or click tracking on (and that has an HTML part) is built for each recipient
// instead: its tracking tokens name the recipient, and they are minted when the message is built,
// just before it is handed over.

export interface PreparedMessage {
  email: EmailRow;
  domain: SendingDomain;
  message: Buffer;
}

/** What the outbound side needs to track: the tokens' key, and where a domain's tracking links point. */
export interface OutboundTracking {
  key: Uint8Array;
  /** scheme://host[:port][/prefix] of the domain's tracking links; undefined: send untracked. */
  baseFor(domain: SendingDomain): string | undefined;
}

interface EmailParts {
  email: EmailRow;
  domain: SendingDomain;
  attachments: EmailAttachmentRow[];
  key: DkimKey;
  /** The message every recipient gets, when it is the same for all (built on first use). */
  shared?: Promise<Buffer>;
}

interface MessageCacheDeps {
  emails: EmailsRepo;
  domains: SendingDomains;
  builder: MessageBuilder;
  clock: Clock;
  tracking?: OutboundTracking;
}

export function messageCache(deps: MessageCacheDeps, capacity = 500) {
  const cache = new Map<string, Promise<EmailParts | undefined>>();
  // A domain's lookup (and its sealed key's opening) is shared by its emails for a short while.
  const domains = new Map<string, { at: number; domain: Promise<SendingDomain | undefined> }>();
  const domainOf = (teamId: string, name: string) => {
    const key = `${teamId}|${name}`;
    const hit = domains.get(key);
    if (hit && Date.now() - hit.at < 30_000) return hit.domain;
    const domain = deps.domains.sendingDomain(teamId, name);
    if (domains.size > 10_000) domains.clear();
    domains.set(key, { at: Date.now(), domain });
    void domain.then((d) => { if (!d) domains.delete(key); }, () => domains.delete(key));
    return domain;
  };
  const load = async (emailId: string): Promise<EmailParts | undefined> => {
    const email = await deps.emails.byIdAnyTeam(emailId);
    if (!email) return undefined;
    const domain = await domainOf(email.team_id, email.from_email.split('@')[1]!);
    if (!domain) return undefined;
    const attachments = email.attachment_count ? await deps.emails.attachments(email.id) : [];
    return { email, domain, attachments, key: { domain: domain.dkim.domain, selector: domain.dkim.selector, privateKeyPem: domain.dkim.privateKeyPem } };
  };
  const partsOf = (emailId: string): Promise<EmailParts | undefined> => {
    let entry = cache.get(emailId);
    if (!entry) {
      entry = load(emailId);
      cache.set(emailId, entry);
      // A failed or empty load is not kept: the next attempt loads again.
      entry.then((m) => { if (!m) cache.delete(emailId); }, () => cache.delete(emailId));
      if (cache.size > capacity) cache.delete(cache.keys().next().value!);
    }
    return entry;
  };
  /** This recipient's tracking, when its email is tracked. */
  const trackingOf = (parts: EmailParts, recipientIdx: number, at: Date): TrackingInput | undefined => {
    const { domain, email } = parts;
    if (!deps.tracking || email.html === null || (!domain.openTracking && !domain.clickTracking)) return undefined;
    const base = deps.tracking.baseFor(domain);
    if (base === undefined) return undefined;
    return {
      key: deps.tracking.key,
      plan: { emailId: email.id, recipientIdx, mintedAt: Math.floor(at.getTime() / 1000), base, open: domain.openTracking, click: domain.clickTracking },
    };
  };
  return async (emailId: string, recipientIdx: number): Promise<PreparedMessage | undefined> => {
    const parts = await partsOf(emailId);
    if (!parts) return undefined;
    const at = deps.clock.now();
    const tracking = trackingOf(parts, recipientIdx, at);
    if (tracking) {
      const message = await deps.builder.build(parts.email, parts.attachments, parts.key, at, tracking);
      return { email: parts.email, domain: parts.domain, message };
    }
    if (!parts.shared) {
      parts.shared = deps.builder.build(parts.email, parts.attachments, parts.key, at);
      // A failed build is not kept.
      parts.shared.catch(() => { parts.shared = undefined; });
    }
    return { email: parts.email, domain: parts.domain, message: await parts.shared };
  };
}
