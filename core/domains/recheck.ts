import { domainsRepo } from '../../storage/repos/index.js';
import { ServiceError } from '../errors.js';
import type { DomainClaims } from './claim.js';
import type { DomainsDeps } from './context.js';
import type { DkimRotation } from './rotation.js';
import type { DomainVerification } from './verify.js';

export interface RecheckSummary {
  checked: number;
  changed: number;
  failed: number;
  keysRetired: number;
  claimsCompleted: number;
}

/**
 * The scheduled re-check (spec: "All domains are also re-checked on a schedule"): every live
 * domain's records are asked again — verified records that stopped resolving become drifted and
 * raise domain.updated — replaced DKIM keys past their grace period are deleted, and pending claims
 * are looked at. One domain's failure never stops the others.
 */
export async function recheckAllDomains(
  deps: DomainsDeps, verification: DomainVerification, rotation: DkimRotation, claims: DomainClaims,
): Promise<RecheckSummary> {
  const repo = domainsRepo(deps.db);
  const summary: RecheckSummary = { checked: 0, changed: 0, failed: 0, keysRetired: 0, claimsCompleted: 0 };
  let cursor = '';
  for (;;) {
    const ids = await repo.liveIdsAfter(cursor, 100);
    if (ids.length === 0) break;
    for (const id of ids) {
      try {
        summary.keysRetired += await rotation.retireDue(id);
        const domain = await repo.byIdAnyTeam(id);
        if (!domain) continue;
        const result = await verification.check(domain);
        summary.checked++;
        if (result.changed) summary.changed++;
      } catch (err) {
        summary.failed++;
        const level = err instanceof ServiceError ? 'info' : 'error';
        deps.logger[level]({ domainId: id, err: err instanceof ServiceError ? err.message : err }, 'domain re-check skipped');
      }
    }
    cursor = ids.at(-1)!;
  }
  summary.claimsCompleted = await claims.checkPending();
  return summary;
}
