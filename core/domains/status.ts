import type { CheckOutcome } from '../../dns/verify.js';
import type { DomainRow } from '../../storage/repos/index.js';
import { isRequired, type PlannedRecord } from './records.js';

export type RecordStatus = 'not_started' | 'pending' | 'verified' | 'failed' | 'temporary_failure' | 'drifted';
export type DomainStatus = 'not_started' | 'pending' | 'verified' | 'partially_verified' | 'failed' | 'temporary_failure';

export interface RecordState {
  status: RecordStatus;
  checked_at: string;
  /** First time it verified; kept through a drift so a later re-appearance is told apart. */
  verified_at?: string;
  /** Why it is not verified, from the last check: what DNS answered instead, or its error. */
  reason?: string;
}

export type RecordStates = Record<string, RecordState>;

export function parseStates(json: string): RecordStates {
  try {
    const parsed = JSON.parse(json) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as RecordStates) : {};
  } catch {
    return {};
  }
}

export const statusOf = (states: RecordStates, record: PlannedRecord): RecordStatus => states[record.key]?.status ?? 'not_started';

/**
 * One record's next state after a DNS check (spec, States and transitions): found → verified;
 * a verified record DNS now says is gone → drifted; never verified and gone past the
 * verification window → failed. When DNS cannot answer, a verified or drifted record keeps its
 * status (a resolver outage is not a drift); others show temporary_failure.
 */
export function nextState(prev: RecordState | undefined, outcome: CheckOutcome, now: Date, windowEnds: Date): RecordState {
  const checked_at = now.toISOString();
  const everVerified = prev?.status === 'verified' || prev?.status === 'drifted';
  const keep = prev?.verified_at ? { verified_at: prev.verified_at } : {};
  switch (outcome.kind) {
    case 'found':
      return { status: 'verified', checked_at, verified_at: prev?.verified_at ?? checked_at };
    case 'absent': {
      const reason = outcome.answers.length === 0 ? 'DNS has no such record at this name' : `DNS answered ${outcome.answers.map((a) => JSON.stringify(a)).join(', ')}`;
      if (everVerified) return { status: 'drifted', checked_at, ...keep, reason };
      return { status: now >= windowEnds ? 'failed' : 'pending', checked_at, ...keep, reason };
    }
    case 'error':
      return { status: everVerified ? prev!.status : 'temporary_failure', checked_at, ...keep, reason: `DNS could not answer (${outcome.code})` };
  }
}

/** The domain's status from the records it needs now (only capabilities that are on count). */
export function domainStatus(domain: DomainRow, planned: readonly PlannedRecord[], states: RecordStates): DomainStatus {
  if (domain.released_at) return 'failed';
  const statuses = planned.filter((r) => isRequired(r, domain)).map((r) => statusOf(states, r));
  if (statuses.every((s) => s === 'verified')) return 'verified';
  if (statuses.every((s) => s === 'not_started')) return 'not_started';
  if (statuses.some((s) => s === 'verified' || s === 'drifted')) return 'partially_verified';
  if (statuses.includes('temporary_failure')) return 'temporary_failure';
  if (statuses.includes('failed')) return 'failed';
  return 'pending';
}

/** Mail may be sent from the domain: it holds the name and its DKIM and MAIL FROM records verify. */
export function isSendingReady(domain: DomainRow, planned: readonly PlannedRecord[], states: RecordStates): boolean {
  if (domain.released_at || !domain.owner_verified_at || domain.sending !== 'enabled') return false;
  const needed = planned.filter((r) => r.need === 'ownership' || r.need === 'sending');
  return needed.length > 1 && needed.every((r) => statusOf(states, r) === 'verified');
}
