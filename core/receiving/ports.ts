// What receiving needs from other areas, declared here by shape so receiving compiles and tests on
// its own: the domains lookup (core/domains/lookup.ts), the return-path check (core/emails/return-path.ts) and
// the sending side's bounce/complaint recording satisfy these structurally.

export interface ReceivingDomain {
  teamId: string;
  domainId: string;
  name: string;
}

export interface ReceivingDomains {
  /** The domain with receiving enabled at this name (lower-case A-label), or undefined. */
  receivingDomain(name: string): Promise<ReceivingDomain | undefined>;
  /**
   * Why a name with no receiving domain is refused, so the refusal can say so: a domain added but
   * not verified yet (the sender should retry), or one with receiving switched off.
   */
  whyNotReceiving?(name: string): Promise<'unverified' | 'receiving_off' | undefined>;
}

export interface VerpTarget {
  emailId: string;
  recipientId: string;
}

/** A return path in svc's form: its signed target, or refused with the reason. */
export type VerpCheck = ({ ok: true } & VerpTarget) | { ok: false; reason: string };

/** Whether an address is one of svc's return paths (undefined: it is not one at all). */
export type VerpChecker = (address: string) => Promise<VerpCheck | undefined>;

/**
 * Whether a mailbox claims an address at a receiving domain. With catch-all on (the default, and
 * the only mode until mailboxes exist) every address is claimed.
 */
export interface MailboxPolicy {
  claims(domain: ReceivingDomain, address: string): Promise<boolean>;
}

export const catchAll: MailboxPolicy = { claims: async () => true };

/** Per-team receiving limits (the plan's): null means none. */
export interface ReceivingLimits {
  limitsFor(teamId: string): Promise<{ dailyCap: number | null; storageQuotaBytes: number | null }>;
}

export const fixedLimits = (dailyCap: number, storageQuotaBytes: number): ReceivingLimits => ({
  limitsFor: async () => ({ dailyCap: dailyCap > 0 ? dailyCap : null, storageQuotaBytes: storageQuotaBytes > 0 ? storageQuotaBytes : null }),
});
