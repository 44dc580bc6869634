import type { SendingDomain, SendingDomains } from '../../core/emails/index.js';
import type { Clock } from '../../core/clock.js';
import type { EmailsRepo } from '../../storage/repos/index.js';
import type { EmailRow } from '../../storage/repos/index.js';
import type { MessageBuilder } from './signing-pool.js';

// The signed message of each email, built once and shared by its recipients (and their
// retries while it stays in memory), plus the sending domain it is signed for.

export interface PreparedMessage {
  email: EmailRow;
  domain: SendingDomain;
  message: Buffer;
}

export function messageCache(deps: { emails: EmailsRepo; domains: SendingDomains; builder: MessageBuilder; clock: Clock }, capacity = 500) {
  const cache = new Map<string, Promise<PreparedMessage | undefined>>();
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
  const build = async (emailId: string): Promise<PreparedMessage | undefined> => {
    const email = await deps.emails.byIdAnyTeam(emailId);
    if (!email) return undefined;
    const domain = await domainOf(email.team_id, email.from_email.split('@')[1]!);
    if (!domain) return undefined;
    const attachments = email.attachment_count ? await deps.emails.attachments(email.id) : [];
    const message = await deps.builder.build(email, attachments, { domain: domain.dkim.domain, selector: domain.dkim.selector, privateKeyPem: domain.dkim.privateKeyPem }, deps.clock.now());
    return { email, domain, message };
  };
  return (emailId: string): Promise<PreparedMessage | undefined> => {
    let entry = cache.get(emailId);
    if (!entry) {
      entry = build(emailId);
      cache.set(emailId, entry);
      // A failed or empty build is not kept: the next attempt builds again.
      entry.then((m) => { if (!m) cache.delete(emailId); }, () => cache.delete(emailId));
      if (cache.size > capacity) cache.delete(cache.keys().next().value!);
    }
    return entry;
  };
}
