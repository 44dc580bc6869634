import { domainsRepo, type DkimKeyRow } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { notFound, ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import { recordsOf, type DomainsDeps } from './context.js';
import { generateDkimKey } from './dkim.js';
import { emitDomainEvent } from './events.js';
import { domainStatus, isSendingReady, parseStates } from './status.js';
import { domainView, type DomainView } from './view.js';

/**
 * DKIM rotation: a new key and selector are published beside the old (state `pending`); the
 * verification that sees the new record switches signing to it (verify.ts, promotions) and marks the
 * old key `retiring`; once its grace period is over the re-check job deletes it and its record
 * leaves the list.
 */
export function dkimRotation(deps: DomainsDeps) {
  const repo = domainsRepo(deps.db);
  return {
    async rotate(teamId: string, id: string): Promise<DomainView> {
      const domain = await repo.byId(teamId, id);
      if (!domain) throw notFound('Domain');
      if (domain.released_at) throw new ServiceError(409, 'resource_locked', 'This domain was claimed by another team; its keys can no longer change.');
      if ((await repo.keys(id)).some((k) => k.state === 'pending')) {
        throw new ServiceError(409, 'resource_locked', 'A DKIM rotation is already waiting for its new record to verify; publish it and verify the domain.');
      }
      const key = await generateDkimKey();
      const now = deps.clock.now().toISOString();
      const row: DkimKeyRow = {
        id: newId(), domain_id: id, selector: key.selector, public_key: key.publicKey,
        private_key_sealed: deps.secretBox.seal(key.privateKeyPem), state: 'pending', created_at: now, activated_at: null, retire_at: null,
      };
      const next = { ...domain, updated_at: now };
      await inTransaction(deps.db, async (trx) => {
        await domainsRepo(trx).insertKey(row);
        await domainsRepo(trx).update(id, { updated_at: now });
        await emitDomainEvent(deps, trx, 'domain.updated', next);
      });
      deps.logger.info({ domainId: id, teamId, selector: key.selector }, 'dkim rotation started');
      return domainView(deps, next, await repo.keys(id));
    },

    /** Deletes keys whose grace period is over; returns how many. */
    async retireDue(domainId: string): Promise<number> {
      const domain = await repo.byIdAnyTeam(domainId);
      if (!domain) return 0;
      const now = deps.clock.now();
      const keys = await repo.keys(domainId);
      const due = keys.filter((k) => k.state === 'retiring' && k.retire_at !== null && Date.parse(k.retire_at) <= now.getTime());
      if (due.length === 0) return 0;
      const remaining = keys.filter((k) => !due.includes(k));
      const planned = recordsOf(deps, domain, remaining);
      const states = parseStates(domain.record_states);
      const kept = Object.fromEntries(planned.filter((r) => states[r.key]).map((r) => [r.key, states[r.key]]));
      const next = { ...domain, record_states: JSON.stringify(kept), updated_at: now.toISOString() };
      next.status = domainStatus(next, planned, kept);
      next.sending_ready = isSendingReady(next, planned, kept) ? 1 : 0;
      await inTransaction(deps.db, async (trx) => {
        for (const key of due) await domainsRepo(trx).removeKey(key.id);
        const { id: _id, team_id: _team, ...patch } = next;
        await domainsRepo(trx).update(domainId, patch);
        await emitDomainEvent(deps, trx, 'domain.updated', next);
      });
      deps.logger.info({ domainId, teamId: domain.team_id, selectors: due.map((k) => k.selector) }, 'dkim keys retired');
      return due.length;
    },
  };
}

export type DkimRotation = ReturnType<typeof dkimRotation>;
