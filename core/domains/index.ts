// The domains area's public face. Sending and receiving import the read side (SendingDomain,
// DomainLookup); the API and the jobs use domainsService.
import { domainAutoconfigure } from './autoconfigure.js';
import { domainClaims } from './claim.js';
import type { DomainsDeps } from './context.js';
import { recheckAllDomains } from './recheck.js';
import { dkimRotation } from './rotation.js';
import { domainCrud } from './service.js';
import { domainVerification } from './verify.js';

export type { DomainsDeps } from './context.js';
export { domainLookup, type DomainLookup, type SendingDomain } from './lookup.js';
export type { DomainView, DomainListItem, DomainRecordView } from './view.js';
export type { CreateDomainInput, UpdateDomainInput } from './input.js';
export type { ClaimInput, ClaimView } from './claim.js';
export type { AutoconfigureInput, AutoconfigureResult } from './autoconfigure.js';
export type { RecheckSummary } from './recheck.js';

export function domainsService(deps: DomainsDeps) {
  const crud = domainCrud(deps);
  const verification = domainVerification(deps);
  const rotation = dkimRotation(deps);
  const claims = domainClaims(deps);
  const autoconfigure = domainAutoconfigure(deps);
  return {
    create: crud.create,
    list: crud.list,
    get: crud.get,
    update: crud.update,
    remove: crud.remove,
    verify: verification.verify,
    verifyAnyTeam: verification.verifyAnyTeam,
    rotateDkim: rotation.rotate,
    claim: claims.create,
    getClaim: claims.get,
    verifyClaim: claims.verify,
    autoconfigure: autoconfigure.run,
    forgetCredential: autoconfigure.forgetCredential,
    recheckAll: () => recheckAllDomains(deps, verification, rotation, claims),
  };
}

export type DomainsService = ReturnType<typeof domainsService>;
export * from './lookup.js';
