import type { Db } from '../../storage/sql/index.js';
import { domainsRepo, type DomainRow } from '../../storage/repos/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { emitEvent } from '../outbox/index.js';
import type { DomainsDeps } from './context.js';
import { domainView } from './view.js';

export type DomainEventType = 'domain.created' | 'domain.updated' | 'domain.deleted';

/**
 * Writes a domain.* event in the caller's transaction; `data` is the domain as the API shows it
 * (records and statuses, never key material), read inside the same transaction.
 */
export async function emitDomainEvent(deps: DomainsDeps, trx: Db, type: DomainEventType, domain: DomainRow): Promise<void> {
  const keys = await domainsRepo(trx).keys(domain.id);
  await emitEvent(eventsRepo(trx), domain.team_id, type, { ...domainView(deps, domain, keys) }, deps.clock.now());
}
