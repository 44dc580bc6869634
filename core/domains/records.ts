import type { RecordCheck } from '../../dns/verify.js';
import type { DkimKeyRow, DomainRow } from '../../storage/repos/index.js';
import type { Region } from '../regions.js';
import { dkimRecordText, quotedStrings } from './dkim.js';
import { absoluteName, relativeName, zonedName } from './names.js';

export type RecordKind = 'DKIM' | 'SPF' | 'Receiving' | 'Tracking';

/**
 * Why a record is there: `ownership` is the active DKIM key's record (it also proves the team
 * controls the zone), `rotation` a new key waiting to take over, `retiring` an old key kept
 * published through the grace period.
 */
export type RecordNeed = 'ownership' | 'sending' | 'receiving' | 'tracking' | 'rotation' | 'retiring';

export type MailFromRecords = 'cname' | 'mx_txt';

export interface PlannedRecord {
  /** Identity of the record's content; its status is stored under this key. */
  key: string;
  record: RecordKind;
  /** Relative to the zone (spec, Domain). */
  name: string;
  fqdn: string;
  type: 'TXT' | 'CNAME' | 'MX';
  /** What to publish, exactly. */
  value: string;
  priority?: number;
  need: RecordNeed;
  check: RecordCheck;
  dkimKeyId?: string;
}

const keyNeeds: Record<DkimKeyRow['state'], RecordNeed> = { active: 'ownership', pending: 'rotation', retiring: 'retiring' };

/**
 * Every record a domain asks for, in the order shown: DKIM (active key first), MAIL FROM (labelled
 * SPF on the wire), Receiving (only in regions that receive), Tracking.
 */
export function planRecords(domain: DomainRow, keys: readonly DkimKeyRow[], region: Region, mode: MailFromRecords): PlannedRecord[] {
  const z = zonedName(domain.name);
  const at = (label: string) => ({ name: relativeName(z, label), fqdn: absoluteName(z, label) });
  const planned: PlannedRecord[] = [];
  const order = { active: 0, pending: 1, retiring: 2 };
  for (const key of [...keys].sort((a, b) => order[a.state] - order[b.state])) {
    const text = dkimRecordText(key.public_key);
    const where = at(`${key.selector}._domainkey`);
    planned.push(make('DKIM', where, 'TXT', quotedStrings(text), keyNeeds[key.state], { expected: text, match: 'dkim_key' }, undefined, key.id));
  }
  const mailFrom = at(domain.custom_return_path);
  if (mode === 'mx_txt') {
    planned.push(make('SPF', mailFrom, 'MX', region.mailFromHost, 'sending', { expected: region.mailFromHost }, 10));
    const spf = `v=spf1 include:${region.mailFromHost} -all`;
    planned.push(make('SPF', mailFrom, 'TXT', spf, 'sending', { expected: spf, match: 'exact' }));
  } else {
    planned.push(make('SPF', mailFrom, 'CNAME', region.mailFromHost, 'sending', { expected: region.mailFromHost }));
  }
  if (region.receiving) {
    planned.push(make('Receiving', at(domain.receiving_host), 'MX', region.inboundHost, 'receiving', { expected: region.inboundHost }, 10));
  }
  planned.push(make('Tracking', at(domain.tracking_subdomain), 'CNAME', region.trackingHost, 'tracking', { expected: region.trackingHost }));
  return planned;
}

function make(
  record: RecordKind, where: { name: string; fqdn: string }, type: PlannedRecord['type'], value: string, need: RecordNeed,
  check: Omit<RecordCheck, 'type' | 'fqdn'>, priority?: number, dkimKeyId?: string,
): PlannedRecord {
  return {
    // A CNAME or MX target is shown fully qualified, with the trailing dot: pasted into a zone
    // file or a DNS console as is, it can never be read as a name under the customer's domain.
    key: `${type} ${where.fqdn} ${check.expected}`, record, name: where.name, fqdn: where.fqdn, type, value: type === 'TXT' ? value : `${value}.`, need,
    check: { type, fqdn: where.fqdn, ...check }, ...(priority !== undefined ? { priority } : {}), ...(dkimKeyId ? { dkimKeyId } : {}),
  };
}

/** Whether a record has to verify for the domain to count as verified (spec: only once its capability is on). */
export function isRequired(record: PlannedRecord, domain: DomainRow): boolean {
  switch (record.need) {
    case 'ownership':
      return true;
    case 'sending':
      return domain.sending === 'enabled';
    case 'receiving':
      return domain.receiving === 'enabled';
    case 'tracking':
      return domain.open_tracking === 1 || domain.click_tracking === 1;
    case 'rotation':
    case 'retiring':
      return false;
  }
}
