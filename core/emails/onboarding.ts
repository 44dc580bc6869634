import { ServiceError } from '../errors.js';
import type { RegionName } from '../regions.js';
import type { SendingDomain } from './ports.js';
import type { NormalisedSend } from './types.js';

// The onboarding sender: onboarding@<mailbox simulator domain> (onboarding@simulator.svc.invalid
// by default), which every team may send from before it has verified a domain of its own, but
// only to the mailbox simulator. Its mail never leaves svc (the outbound queue resolves simulator
// recipients without building the message), so nothing is ever signed for it and no DNS is
// needed: a fresh appliance can send its first email. The name is the same on every install, so
// the README's first-steps snippet works as written.

export const onboardingLocalPart = 'onboarding';
/** The domain id its emails carry; no domain row has it (ids are generated, never a word). */
export const onboardingDomainId = 'onboarding';
/** Its emails' region: the spec's default region, which an `svc start` of every role serves. */
const onboardingRegion: RegionName = 'us-east-1';
const simulatorMailboxes = ['delivered', 'bounced', 'complained', 'suppressed'];

export const onboardingAddress = (simulatorDomain: string) => `${onboardingLocalPart}@${simulatorDomain}`;

/** Whether a From domain is the mailbox simulator's, where only the onboarding sender lives. */
export const isOnboardingDomain = (fromDomain: string, simulatorDomain: string) =>
  !!simulatorDomain && fromDomain.toLowerCase() === simulatorDomain;

/**
 * The onboarding sender's stand-in for a verified domain, once the send is checked: From is
 * exactly onboarding@, and every recipient (to, cc, bcc) is a simulator address. Else 403 naming why.
 */
export function onboardingDomain(teamId: string, send: NormalisedSend, simulatorDomain: string): SendingDomain {
  const sender = onboardingAddress(simulatorDomain);
  const local = send.from.address.slice(0, send.from.address.lastIndexOf('@')).toLowerCase();
  if (local !== onboardingLocalPart) {
    throw refusal('from', `${simulatorDomain} is the mailbox simulator's domain: its only sender is ${sender}. `
      + 'Add and verify a domain of your own to send from another address.', { from: send.from.address });
  }
  const outside = send.recipients.find((r) => r.domain !== simulatorDomain);
  if (outside) {
    const mailboxes = simulatorMailboxes.map((m) => `${m}@`).join(', ');
    throw refusal(outside.kind, `The onboarding sender ${sender} may send only to the mailbox simulator (${mailboxes}${simulatorDomain}); `
      + `${outside.address} is not one of them. Add and verify a domain to send to anyone else.`, { recipient: outside.address });
  }
  return {
    id: onboardingDomainId, teamId, name: simulatorDomain, region: onboardingRegion, tls: 'opportunistic',
    returnPathHost: simulatorDomain,
    // Never used: no message from this sender is built, so none is signed.
    dkim: { selector: '', privateKeyPem: '', domain: simulatorDomain },
    openTracking: false, clickTracking: false, trackingHost: simulatorDomain,
  };
}

function refusal(path: string, message: string, details: Record<string, string>): ServiceError {
  return new ServiceError(403, 'validation_error', message, {
    errors: [{ path, message }], details: { ...details, sender: 'onboarding', allowed: ['simulator'] },
  });
}
