import { domainsRepo, type DkimKeyRow, type DomainRow } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { notFound, ServiceError, validationError } from '../errors.js';
import { newId } from '../ids.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import type { RegionName } from '../regions.js';
import { recordsOf, type DomainsDeps } from './context.js';
import { generateDkimKey } from './dkim.js';
import { emitDomainEvent } from './events.js';
import { applySettings, defaultSettings, parseRegion, returnPathInUse, type CreateDomainInput, type DomainSettings, type UpdateDomainInput } from './input.js';
import { checkReceivingMx } from './mx-in-use.js';
import { absoluteName, parseDomainName, zonedName } from './names.js';
import { domainStatus, isSendingReady, parseStates } from './status.js';
import { domainListItem, domainView, type DomainListItem, type DomainView } from './view.js';

/** Adding, reading, changing and removing a team's domains. Verification lives in verify.ts. */
export function domainCrud(deps: DomainsDeps) {
  const repo = domainsRepo(deps.db);

  const load = async (teamId: string, id: string): Promise<{ domain: DomainRow; keys: DkimKeyRow[] }> => {
    const domain = await repo.byId(teamId, id);
    if (!domain) throw notFound('Domain');
    return { domain, keys: await repo.keys(id) };
  };

  return {
    load,

    async create(teamId: string, input: CreateDomainInput): Promise<DomainView> {
      const zoned = parseDomainName(input.name);
      const region = parseRegion(input.region);
      const settings = applySettings(defaultSettings, input);
      checkRegionReceives(deps, region, settings);
      await checkNameFree(deps, teamId, zoned.name, settings);
      await deps.checkDomainLimit(teamId);
      const receivingName = absoluteName(zoned, settings.receiving_host);
      if (settings.receiving === 'enabled' && !input.confirm_replace_mx) await checkReceivingMx(deps.resolver, deps.regions, receivingName);
      const key = await generateDkimKey();
      const now = deps.clock.now().toISOString();
      const domain: DomainRow = {
        id: newId(), team_id: teamId, name: zoned.name, region, ...settings, receiving_name: receivingName,
        status: 'not_started', record_states: '{}', sending_ready: 0, owner_verified_at: null, released_at: null, last_checked_at: null,
        provider_token: null, created_at: now, updated_at: now,
      };
      const keyRow: DkimKeyRow = {
        id: newId(), domain_id: domain.id, selector: key.selector, public_key: key.publicKey,
        private_key_sealed: deps.secretBox.seal(key.privateKeyPem), state: 'active', created_at: now, activated_at: now, retire_at: null,
      };
      await inTransaction(deps.db, async (trx) => {
        await domainsRepo(trx).insert(domain);
        await domainsRepo(trx).insertKey(keyRow);
        await emitDomainEvent(deps, trx, 'domain.created', domain);
      });
      deps.logger.info({ domainId: domain.id, teamId, domain: domain.name, region, selector: key.selector }, 'domain added');
      return domainView(deps, domain, [keyRow]);
    },

    async list(teamId: string | undefined, query: RawPageQuery): Promise<ListEnvelope<DomainListItem>> {
      const page = await repo.list(teamId, parsePageQuery(query));
      return listOf(page.data.map(domainListItem), page.has_more);
    },

    async get(teamId: string, id: string): Promise<DomainView> {
      const { domain, keys } = await load(teamId, id);
      return domainView(deps, domain, keys);
    },

    async update(teamId: string, id: string, input: UpdateDomainInput): Promise<{ object: 'domain'; id: string }> {
      if (input.id !== undefined && input.id !== id) throw validationError(400, 'id', 'The `id` field, when sent, must equal the id in the path.');
      const { domain, keys } = await load(teamId, id);
      if (input.region !== undefined && input.region !== domain.region) {
        throw validationError(422, 'region', 'The `region` of a domain is chosen when it is added and cannot change.');
      }
      const settings = applySettings(settingsOf(domain), input);
      checkRegionReceives(deps, domain.region as RegionName, settings);
      if (settings.custom_return_path !== domain.custom_return_path) await checkReturnPathFree(deps, domain.name, settings.custom_return_path);
      const receivingName = absoluteName(zonedName(domain.name), settings.receiving_host);
      const receivingTurnsOn = settings.receiving === 'enabled' && (domain.receiving !== 'enabled' || receivingName !== domain.receiving_name);
      if (receivingTurnsOn && !input.confirm_replace_mx) await checkReceivingMx(deps.resolver, deps.regions, receivingName);
      const next: DomainRow = { ...domain, ...settings, receiving_name: receivingName, updated_at: deps.clock.now().toISOString() };
      const planned = recordsOf(deps, next, keys);
      const states = parseStates(next.record_states);
      next.status = domainStatus(next, planned, states);
      next.sending_ready = isSendingReady(next, planned, states) ? 1 : 0;
      await inTransaction(deps.db, async (trx) => {
        const { id: _id, team_id: _team, ...patch } = next;
        await domainsRepo(trx).update(id, patch);
        await emitDomainEvent(deps, trx, 'domain.updated', next);
      });
      deps.logger.info({ domainId: id, teamId, status: next.status, sendingReady: next.sending_ready === 1 }, 'domain changed');
      return { object: 'domain', id };
    },

    async remove(teamId: string, id: string): Promise<{ object: 'domain'; id: string; deleted: true }> {
      const { domain } = await load(teamId, id);
      await inTransaction(deps.db, async (trx) => {
        await emitDomainEvent(deps, trx, 'domain.deleted', domain);
        await domainsRepo(trx).remove(id);
      });
      deps.logger.info({ domainId: id, teamId, domain: domain.name }, 'domain removed');
      return { object: 'domain', id, deleted: true };
    },
  };
}

export type DomainCrud = ReturnType<typeof domainCrud>;

export const settingsOf = (d: DomainRow): DomainSettings => ({
  sending: d.sending, receiving: d.receiving, open_tracking: d.open_tracking, click_tracking: d.click_tracking, tls: d.tls,
  custom_return_path: d.custom_return_path, tracking_subdomain: d.tracking_subdomain, receiving_host: d.receiving_host,
});

function checkRegionReceives(deps: DomainsDeps, region: RegionName, settings: DomainSettings): void {
  if (settings.receiving === 'enabled' && !deps.regions(region).receiving) {
    throw validationError(422, 'capabilities.receiving', `Receiving is not available in ${region}; choose a region that receives mail (us-east-1 or eu-west-1).`);
  }
}

/**
 * A name another team holds verified is 409 resource_locked (spec): the claim flow takes it over.
 * The same team adding a name twice is refused too; several teams may hold unverified copies.
 */
async function checkNameFree(deps: DomainsDeps, teamId: string, name: string, settings: DomainSettings): Promise<void> {
  const repo = domainsRepo(deps.db);
  const owner = await repo.owner(name);
  if (owner && owner.team_id !== teamId) {
    throw new ServiceError(409, 'resource_locked', `The domain ${name} is verified on another team. To move it to this team, claim it with POST /domains/claim.`, { claimable: true });
  }
  if ((await repo.liveCopies(name)).some((d) => d.team_id === teamId)) {
    throw validationError(422, 'name', `The domain ${name} has already been added to this team.`);
  }
  await checkReturnPathFree(deps, name, settings.custom_return_path);
}

/** The MAIL FROM host must not be a domain of its own on svc: both would claim the same records. */
async function checkReturnPathFree(deps: DomainsDeps, name: string, label: string): Promise<void> {
  const host = `${label}.${name}`;
  if ((await domainsRepo(deps.db).liveCopies(host)).length > 0) {
    throw returnPathInUse(`The return path ${host} is itself a domain on svc; choose another \`custom_return_path\`.`);
  }
}
