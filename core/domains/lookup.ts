import { domainsRepo } from '../../storage/repos/index.js';
import type { RegionName } from '../regions.js';
import type { DomainsDeps } from './context.js';

/** What sending needs to know about a From domain the team may send from. */
export interface SendingDomain {
  id: string;
  teamId: string;
  name: string;
  region: RegionName;
  tls: 'opportunistic' | 'enforced';
  /** The MAIL FROM host, e.g. send.example.com (the `custom_return_path` label under the domain). */
  returnPathHost: string;
  /** The key that signs now: the active key (a rotation switches only after the new record verifies). */
  dkim: { selector: string; privateKeyPem: string; domain: string };
  openTracking: boolean;
  clickTracking: boolean;
  /** The customer's tracking host, e.g. links.example.com (a CNAME to the region's tracking host). */
  trackingHost: string;
}

export interface DomainLookup {
  /** Only when the domain's sending records (DKIM + MAIL FROM) are verified and the team currently holds it. */
  sendingDomain(teamId: string, fromDomain: string): Promise<SendingDomain | undefined>;
  /**
   * The team receiving mail for `name` (the domain, or its `receiving_host`), when receiving is
   * on and the team holds the domain (its DKIM record proved control of the zone).
   */
  receivingDomain(name: string): Promise<{ teamId: string; domainId: string; name: string } | undefined>;
  /** Why mail for a name svc does not receive for is refused: a domain added but not verified yet, or with receiving off. */
  whyNotReceiving(name: string): Promise<'unverified' | 'receiving_off' | undefined>;
  /** The domain id is the team's, held by it, and may send (used to pin sending keys to a domain). */
  isVerifiedDomain(teamId: string, domainId: string): Promise<boolean>;
  /** Every team's domains that may send, for the sandbox rule. */
  verifiedDomainNames(): Promise<string[]>;
}

type LookupDeps = Pick<DomainsDeps, 'db' | 'secretBox'>;

/** Read-only answers for the sending and receiving work; a claimed (released) copy never answers. */
export function domainLookup(deps: LookupDeps): DomainLookup {
  const repo = domainsRepo(deps.db);
  return {
    async sendingDomain(teamId, fromDomain) {
      const domain = await repo.owner(fromDomain.trim().toLowerCase().replace(/\.$/, ''));
      if (!domain || domain.team_id !== teamId || domain.sending_ready !== 1) return undefined;
      const key = (await repo.keys(domain.id)).find((k) => k.state === 'active');
      if (!key) return undefined;
      return {
        id: domain.id, teamId, name: domain.name, region: domain.region as RegionName, tls: domain.tls,
        returnPathHost: `${domain.custom_return_path}.${domain.name}`,
        dkim: sealedDkim(key.selector, domain.name, () => deps.secretBox.open(key.private_key_sealed)),
        openTracking: domain.open_tracking === 1, clickTracking: domain.click_tracking === 1,
        trackingHost: `${domain.tracking_subdomain}.${domain.name}`,
      };
    },

    async receivingDomain(name) {
      const domain = await repo.ownerByReceivingName(name.trim().toLowerCase().replace(/\.$/, ''));
      if (!domain || domain.receiving !== 'enabled') return undefined;
      return { teamId: domain.team_id, domainId: domain.id, name: domain.name };
    },

    async whyNotReceiving(name) {
      const claimants = await repo.claimantsByReceivingName(name.trim().toLowerCase().replace(/\.$/, ''));
      if (claimants.some((d) => d.owner_verified_at !== null && d.receiving !== 'enabled')) return 'receiving_off';
      if (claimants.some((d) => d.owner_verified_at === null && d.receiving === 'enabled')) return 'unverified';
      return undefined;
    },

    async isVerifiedDomain(teamId, domainId) {
      const domain = await repo.byId(teamId, domainId);
      return !!domain && !domain.released_at && !!domain.owner_verified_at && domain.sending_ready === 1;
    },

    verifiedDomainNames: () => repo.sendingReadyNames(),
  };
}

/**
 * The signing key, opened from its sealed copy on first use: only the outbound signer reads it.
 * The API asks for the sending domain on every send (is it verified, which region, tracking), and
 * opening the key there was about 40 µs of a single POST /emails for nothing.
 */
function sealedDkim(selector: string, domain: string, open: () => string): SendingDomain['dkim'] {
  let pem: string | undefined;
  return {
    selector, domain,
    get privateKeyPem() {
      pem ??= open();
      return pem;
    },
  };
}
