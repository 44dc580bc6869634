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

/**
 * At most `capacity` emails and about `byteBudget` bytes of their bodies, attachments and shared
 * signed messages are kept (the oldest go first; the newest stays even when larger): 500 emails
 * of up to 40 MiB of attachments each would otherwise be gigabytes. A message that is evicted while
 * being delivered stays with its deliveries; the next attempt loads it again.
 */
export function messageCache(deps: MessageCacheDeps, capacity = 500, byteBudget = 64 * 2 ** 20) {
  const cache = new Map<string, Promise<EmailParts | undefined>>();
  const sizes = new Map<string, number>();
  let bytes = 0;
  const forget = (emailId: string) => {
    cache.delete(emailId);
    bytes -= sizes.get(emailId) ?? 0;
    sizes.delete(emailId);
  };
  const count = (emailId: string, entry: Promise<EmailParts | undefined>, n: number) => {
    if (cache.get(emailId) !== entry) return; // evicted meanwhile: not held here
    sizes.set(emailId, (sizes.get(emailId) ?? 0) + n);
    bytes += n;
    for (const oldest of cache.keys()) {
      if (bytes <= byteBudget || oldest === emailId) break;
      forget(oldest);
    }
  };
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
      const loading = load(emailId);
      entry = loading;
      cache.set(emailId, loading);
      // A failed or empty load is not kept: the next attempt loads again.
      loading.then((m) => {
        if (!m) { if (cache.get(emailId) === loading) forget(emailId); return; }
        count(emailId, loading, partsBytes(m));
      }, () => { if (cache.get(emailId) === loading) forget(emailId); });
      if (cache.size > capacity) forget(cache.keys().next().value!);
    }
    return entry;
  };
  /** Bytes an email's parts hold: its bodies (UTF-16 at most) and attachments. */
  const partsBytes = (m: EmailParts) =>
    2 * ((m.email.text?.length ?? 0) + (m.email.html?.length ?? 0)) + m.attachments.reduce((n, a) => n + a.content.length, 0);
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
    const entry = partsOf(emailId);
    const parts = await entry;
    if (!parts) return undefined;
    const at = deps.clock.now();
    const tracking = trackingOf(parts, recipientIdx, at);
    if (tracking) {
      const message = await deps.builder.build(parts.email, parts.attachments, parts.key, at, tracking);
      return { email: parts.email, domain: parts.domain, message };
    }
    if (!parts.shared) {
      const shared = deps.builder.build(parts.email, parts.attachments, parts.key, at);
      parts.shared = shared;
      // A failed build is not kept.
      shared.then((m) => count(emailId, entry, m.length), () => { parts.shared = undefined; });
    }
    return { email: parts.email, domain: parts.domain, message: await parts.shared };
  };
}
