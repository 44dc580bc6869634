import type { DnsResolver } from '../../dns/resolver.js';
import type { CloudflareClient } from '../../net/cloudflare.js';
import type { Db } from '../../storage/sql/index.js';
import type { DkimKeyRow, DomainRow } from '../../storage/repos/index.js';
import type { SecretBox } from '../../storage/files/index.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { RegionDirectory, RegionName } from '../regions.js';
import { planRecords, type MailFromRecords, type PlannedRecord } from './records.js';

/** What the domains area is built from; the entry point fills it from config and the open stores. */
export interface DomainsDeps {
  db: Db;
  /** Uncached: verification must see the zone as it is now. */
  resolver: DnsResolver;
  regions: RegionDirectory;
  secretBox: SecretBox;
  clock: Clock;
  logger: Logger;
  mailFromRecords: MailFromRecords;
  /** A record never seen this long after the domain was added is `failed` (it is still re-checked). */
  verifyWindowHours: number;
  /** How long a replaced DKIM key stays published (and its record listed) after the new one took over. */
  dkimGraceHours: number;
  /** A client of the DNS provider's v4 API (Cloudflare) for one token (net/cloudflare.ts). */
  cloudflare: (token: string) => CloudflareClient;
  /** Refuses the team's next domain past its plan's `domain_limit` (the team area's checkLimit). */
  checkDomainLimit(teamId: string): Promise<void>;
}

/** The records of a domain as it stands. */
export function recordsOf(deps: DomainsDeps, domain: DomainRow, keys: readonly DkimKeyRow[]): PlannedRecord[] {
  return planRecords(domain, keys, deps.regions(domain.region as RegionName), deps.mailFromRecords);
}

export const windowEnds = (deps: DomainsDeps, domain: DomainRow): Date =>
  new Date(Date.parse(domain.created_at) + deps.verifyWindowHours * 3600_000);
