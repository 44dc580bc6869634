import type { DkimKeyRow, DomainRow } from '../../storage/repos/index.js';
import type { RegionName } from '../regions.js';
import { recordsOf, type DomainsDeps } from './context.js';
import { isRequired, type PlannedRecord, type RecordKind } from './records.js';
import { parseStates, statusOf, type DomainStatus, type RecordStatus } from './status.js';

export interface DomainRecordView {
  record: RecordKind;
  name: string;
  type: 'TXT' | 'CNAME' | 'MX';
  ttl: 'Auto';
  status: RecordStatus;
  value: string;
  priority?: number;
  /** Present (true) when the record's capability is off: it need not be published until it is on. */
  optional?: true;
}

export interface DomainCapabilitiesView {
  sending: 'enabled' | 'disabled';
  receiving: 'enabled' | 'disabled';
}

export interface DomainListItem {
  object: 'domain';
  id: string;
  name: string;
  status: DomainStatus;
  created_at: string;
  region: RegionName;
  capabilities: DomainCapabilitiesView;
  open_tracking: boolean;
  click_tracking: boolean;
  tls: 'opportunistic' | 'enforced';
  custom_return_path: string;
  tracking_subdomain: string;
  receiving_host: string;
  /** Only on a copy another team has claimed: it is kept for the record and never used again. */
  failure_reason?: 'claimed_by_another_team';
}

export interface DomainView extends DomainListItem {
  records: DomainRecordView[];
}

export function domainListItem(domain: DomainRow): DomainListItem {
  return {
    object: 'domain', id: domain.id, name: domain.name, status: domain.status as DomainStatus, created_at: domain.created_at,
    region: domain.region as RegionName, capabilities: { sending: domain.sending, receiving: domain.receiving },
    open_tracking: domain.open_tracking === 1, click_tracking: domain.click_tracking === 1, tls: domain.tls,
    custom_return_path: domain.custom_return_path, tracking_subdomain: domain.tracking_subdomain, receiving_host: domain.receiving_host,
    ...(domain.released_at ? { failure_reason: 'claimed_by_another_team' as const } : {}),
  };
}

/** A sending, receiving or tracking record whose capability is off (rotation records are never optional). */
const capabilityOff = (r: PlannedRecord, domain: DomainRow) =>
  (r.need === 'sending' || r.need === 'receiving' || r.need === 'tracking') && !isRequired(r, domain);

/** The wire shape with every record and its status; also the `data` of domain.* events (no key material). */
export function domainView(deps: DomainsDeps, domain: DomainRow, keys: readonly DkimKeyRow[]): DomainView {
  const states = parseStates(domain.record_states);
  const records = recordsOf(deps, domain, keys).map((r): DomainRecordView => ({
    record: r.record, name: r.name, type: r.type, ttl: 'Auto', status: statusOf(states, r), value: r.value,
    ...(r.priority !== undefined ? { priority: r.priority } : {}),
    ...(capabilityOff(r, domain) ? { optional: true as const } : {}),
  }));
  return { ...domainListItem(domain), records };
}
