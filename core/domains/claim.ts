import { randomBytes } from 'node:crypto';
import { checkRecord } from '../../dns/verify.js';
import type { Db } from '../../storage/sql/index.js';
import { domainsRepo, type ClaimStatus, type DkimKeyRow, type DomainClaimRow, type DomainRow } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { notFound, validationError } from '../errors.js';
import { newId } from '../ids.js';
import type { RegionName } from '../regions.js';
import type { DomainsDeps } from './context.js';
import { generateDkimKey, type GeneratedDkimKey } from './dkim.js';
import { emitDomainEvent } from './events.js';
import { applySettings, defaultSettings, parseRegion } from './input.js';
import { absoluteName, parseDomainName, relativeName, zonedName } from './names.js';

/** How long a claim's TXT record has to appear before the claim expires. */
export const CLAIM_VALID_DAYS = 7;
const PREFIX = 'svc-domain-verification=';

export interface ClaimInput {
  name?: string;
  region?: string;
  custom_return_path?: string;
  open_tracking?: boolean;
  click_tracking?: boolean;
  tracking_subdomain?: string;
}

export interface ClaimView {
  object: 'domain_claim';
  /** Also the id the domain gets in the claiming team once the claim completes. */
  id: string;
  name: string;
  status: ClaimStatus;
  domain_id: string | null;
  region: RegionName;
  record: { type: 'TXT'; name: string; value: string; ttl: 'Auto' };
  blocked_reason: null;
  failure_reason: string | null;
  created_at: string;
  expires_at: string;
}

/**
 * Taking over a name another team holds verified (spec, POST /domains/claim): the claimant
 * publishes a TXT record at the domain root; when it resolves, the claimant's copy holds the name
 * and the previous team's copy is released — kept (status failed, failure_reason
 * claimed_by_another_team) but never used for sending or receiving again.
 */
export function domainClaims(deps: DomainsDeps) {
  const repo = domainsRepo(deps.db);

  async function settle(claim: DomainClaimRow): Promise<DomainClaimRow> {
    if (claim.status !== 'pending') return claim;
    const now = deps.clock.now();
    if (Date.parse(claim.expires_at) <= now.getTime()) {
      await repo.updateClaim(claim.id, { status: 'expired' });
      return { ...claim, status: 'expired' };
    }
    const outcome = await checkRecord(deps.resolver, { type: 'TXT', fqdn: claim.name, expected: PREFIX + claim.token, match: 'exact' });
    await repo.updateClaim(claim.id, { last_checked_at: now.toISOString() });
    if (outcome.kind !== 'found') return { ...claim, last_checked_at: now.toISOString() };
    const key = await generateDkimKey();
    const domainId = await inTransaction(deps.db, (trx) => complete(deps, trx, claim, key, now));
    deps.logger.info({ claimId: claim.id, teamId: claim.team_id, domainId, domain: claim.name }, 'domain claim completed');
    return (await repo.claimById(undefined, claim.id))!;
  }

  return {
    async create(teamId: string, input: ClaimInput): Promise<ClaimView> {
      const zoned = parseDomainName(input.name);
      const region = parseRegion(input.region);
      const settings = applySettings(defaultSettings, input);
      const owner = await repo.owner(zoned.name);
      if (!owner) throw validationError(422, 'name', `The domain ${zoned.name} is not verified on another team; add it with POST /domains.`);
      if (owner.team_id === teamId) throw validationError(422, 'name', `The domain ${zoned.name} is already verified on this team.`);
      const existing = await repo.pendingClaim(teamId, zoned.name);
      if (existing) return claimView(existing);
      await deps.checkDomainLimit(teamId);
      const now = deps.clock.now();
      const claim: DomainClaimRow = {
        id: newId(), team_id: teamId, name: zoned.name, region, custom_return_path: settings.custom_return_path,
        open_tracking: settings.open_tracking, click_tracking: settings.click_tracking, tracking_subdomain: settings.tracking_subdomain,
        token: randomBytes(16).toString('hex'), status: 'pending', failure_reason: null, previous_domain_id: owner.id, domain_id: null,
        created_at: now.toISOString(), expires_at: new Date(now.getTime() + CLAIM_VALID_DAYS * 86400_000).toISOString(),
        completed_at: null, last_checked_at: null,
      };
      await repo.insertClaim(claim);
      deps.logger.info({ claimId: claim.id, teamId, domain: claim.name }, 'domain claim started');
      return claimView(claim);
    },

    async get(teamId: string, id: string): Promise<ClaimView> {
      const claim = await repo.claimById(teamId, id);
      if (!claim) throw notFound('Domain claim');
      return claimView(claim);
    },

    /** Looks for the TXT record now; completes the claim when it is there. */
    async verify(teamId: string, id: string): Promise<ClaimView> {
      const claim = await repo.claimById(teamId, id);
      if (!claim) throw notFound('Domain claim');
      return claimView(await settle(claim));
    },

    /** The scheduled re-check: every pending claim once. */
    async checkPending(): Promise<number> {
      let completed = 0;
      for (const id of await repo.pendingClaimIds(1000)) {
        const claim = await repo.claimById(undefined, id);
        if (claim && (await settle(claim)).status === 'completed') completed++;
      }
      return completed;
    },
  };
}

export type DomainClaims = ReturnType<typeof domainClaims>;

/** One transaction: release the holder's copy, give the claimant a copy that holds the name. */
async function complete(deps: DomainsDeps, trx: Db, claim: DomainClaimRow, key: GeneratedDkimKey, now: Date): Promise<string> {
  const repo = domainsRepo(trx);
  const at = now.toISOString();
  const holder = await repo.owner(claim.name);
  if (holder && holder.team_id !== claim.team_id) {
    const released: DomainRow = { ...holder, released_at: at, sending_ready: 0, status: 'failed', updated_at: at };
    await repo.update(holder.id, { released_at: at, sending_ready: 0, status: 'failed', updated_at: at });
    await emitDomainEvent(deps, trx, 'domain.updated', released);
  }
  let domainId: string;
  const ownCopy = holder?.team_id === claim.team_id ? holder : (await repo.liveCopies(claim.name)).find((d) => d.team_id === claim.team_id);
  if (ownCopy) {
    domainId = ownCopy.id;
    await repo.update(ownCopy.id, { owner_verified_at: ownCopy.owner_verified_at ?? at, updated_at: at });
    await emitDomainEvent(deps, trx, 'domain.updated', { ...ownCopy, owner_verified_at: ownCopy.owner_verified_at ?? at, updated_at: at });
  } else {
    domainId = claim.id;
    const domain = claimedDomain(claim, at);
    await repo.insert(domain);
    await repo.insertKey(keyRow(deps, domain.id, key, at));
    await emitDomainEvent(deps, trx, 'domain.created', domain);
  }
  await repo.updateClaim(claim.id, { status: 'completed', domain_id: domainId, completed_at: at });
  return domainId;
}

function claimedDomain(claim: DomainClaimRow, at: string): DomainRow {
  const zoned = zonedName(claim.name);
  return {
    id: claim.id, team_id: claim.team_id, name: claim.name, region: claim.region, sending: 'enabled', receiving: 'disabled',
    open_tracking: claim.open_tracking, click_tracking: claim.click_tracking, tls: 'opportunistic',
    custom_return_path: claim.custom_return_path, tracking_subdomain: claim.tracking_subdomain, receiving_host: '@',
    receiving_name: absoluteName(zoned, '@'), status: 'not_started', record_states: '{}', sending_ready: 0,
    // The TXT record proved control of the zone: the claimant holds the name from now on.
    owner_verified_at: at, released_at: null, last_checked_at: null, provider_token: null, created_at: at, updated_at: at,
  };
}

const keyRow = (deps: DomainsDeps, domainId: string, key: GeneratedDkimKey, at: string): DkimKeyRow => ({
  id: newId(), domain_id: domainId, selector: key.selector, public_key: key.publicKey,
  private_key_sealed: deps.secretBox.seal(key.privateKeyPem), state: 'active', created_at: at, activated_at: at, retire_at: null,
});

function claimView(claim: DomainClaimRow): ClaimView {
  return {
    object: 'domain_claim', id: claim.id, name: claim.name, status: claim.status, domain_id: claim.domain_id,
    region: claim.region as RegionName,
    record: { type: 'TXT', name: relativeName(zonedName(claim.name), '@'), value: PREFIX + claim.token, ttl: 'Auto' },
    blocked_reason: null, failure_reason: claim.failure_reason, created_at: claim.created_at, expires_at: claim.expires_at,
  };
}
