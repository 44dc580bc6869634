// What sending needs from the domains area: its SendingDomain record, and the narrow lookup below.
import type { SendingDomain } from '../domains/index.js';

export type { SendingDomain };
export type SendingDomainKey = SendingDomain['dkim'];

export interface SendingDomains {
  /** The team's verified sending domain for a From domain, or undefined. */
  sendingDomain(teamId: string, fromDomain: string): Promise<SendingDomain | undefined>;
  /** Every domain verified on the service, by any team (the sandbox rule). */
  verifiedDomainNames(): Promise<string[]>;
}
