import { checkRecord } from '../../dns/verify.js';
import { domainsRepo, type DkimKeyRow, type DomainRow } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { notFound, ServiceError } from '../errors.js';
import { recordsOf, windowEnds, type DomainsDeps } from './context.js';
import { emitDomainEvent } from './events.js';
import type { PlannedRecord } from './records.js';
import { domainStatus, isSendingReady, nextState, parseStates, statusOf, type RecordStates } from './status.js';
import { domainView, type DomainView } from './view.js';

/** Spec, Limits: a repeat verify within this window returns current state without asking DNS. */
export const VERIFY_REPEAT_MS = 15_000;

export interface CheckResult {
  domain: DomainRow;
  keys: DkimKeyRow[];
  /** Some status changed (and domain.updated was written). */
  changed: boolean;
}

type KeyChange = { id: string; state: DkimKeyRow['state']; activated_at?: string; retire_at?: string };

/** Checks a domain's records against DNS and records what it found. */
export function domainVerification(deps: DomainsDeps) {
  const repo = domainsRepo(deps.db);

  async function check(domain: DomainRow): Promise<CheckResult> {
    const keys = await repo.keys(domain.id);
    // A copy another team has claimed keeps its last state: it can never hold the name again.
    if (domain.released_at) return { domain, keys, changed: false };
    const now = deps.clock.now();
    const before = recordsOf(deps, domain, keys);
    const outcomes = await Promise.all(before.map((r) => checkRecord(deps.resolver, r.check)));
    const prev = parseStates(domain.record_states);
    const states: RecordStates = {};
    before.forEach((r, i) => { states[r.key] = nextState(prev[r.key], outcomes[i]!, now, windowEnds(deps, domain)); });
    const keyChanges = promotions(deps, keys, before, states, now);
    const nextKeys = keys.map((k) => ({ ...k, ...keyChanges.find((c) => c.id === k.id) }));
    const next: DomainRow = { ...domain, record_states: JSON.stringify(states), last_checked_at: now.toISOString() };
    const planned = recordsOf(deps, next, nextKeys);
    const provesOwnership = planned.some((r) => r.need === 'ownership' && states[r.key]?.status === 'verified');
    if (provesOwnership && !next.owner_verified_at) {
      await refuseIfHeldElsewhere(deps, next);
      next.owner_verified_at = now.toISOString();
    }
    next.status = domainStatus(next, planned, states);
    next.sending_ready = isSendingReady(next, planned, states) ? 1 : 0;
    const changed = keyChanges.length > 0 || next.status !== domain.status || next.owner_verified_at !== domain.owner_verified_at
      || planned.some((r) => statusOf(states, r) !== statusOf(prev, r));
    if (changed) next.updated_at = now.toISOString();
    await save(next, keyChanges, changed);
    const notVerified = planned.filter((r) => statusOf(states, r) !== 'verified')
      .map((r) => ({ record: r.record, type: r.check.type, name: r.check.fqdn, expected: r.check.expected, reason: states[r.key]?.reason }));
    deps.logger.info({
      domainId: domain.id, teamId: domain.team_id, status: next.status, sendingReady: next.sending_ready === 1, changed, promoted: keyChanges.length > 0, notVerified,
    }, changed ? 'domain records changed' : 'domain records checked');
    return { domain: next, keys: nextKeys, changed };
  }

  async function save(next: DomainRow, keyChanges: KeyChange[], changed: boolean): Promise<void> {
    try {
      await inTransaction(deps.db, async (trx) => {
        const { id, team_id: _team, ...patch } = next;
        await domainsRepo(trx).update(id, patch);
        for (const { id: keyId, ...change } of keyChanges) await domainsRepo(trx).updateKey(keyId, change);
        if (changed) await emitDomainEvent(deps, trx, 'domain.updated', next);
      });
    } catch (err) {
      // The partial unique index: another team's copy took the name between our read and write.
      if (/UNIQUE constraint failed/i.test(String((err as Error).message))) throw heldElsewhere(next.name);
      throw err;
    }
  }

  return {
    check,

    /** POST /domains/{id}/verify: checks now, unless the last check was under 15 seconds ago. */
    async verify(teamId: string, id: string): Promise<DomainView> {
      const domain = await repo.byId(teamId, id);
      if (!domain) throw notFound('Domain');
      const last = domain.last_checked_at ? Date.parse(domain.last_checked_at) : undefined;
      if (last !== undefined && deps.clock.now().getTime() - last < VERIFY_REPEAT_MS) {
        return domainView(deps, domain, await repo.keys(id));
      }
      const result = await check(domain);
      return domainView(deps, result.domain, result.keys);
    },

    /** The operator's verify: any team, no repeat guard. */
    async verifyAnyTeam(id: string): Promise<DomainView & { checks: RecordCheckView[] }> {
      const domain = await repo.byIdAnyTeam(id);
      if (!domain) throw notFound('Domain');
      const result = await check(domain);
      return { ...domainView(deps, result.domain, result.keys), checks: recordChecks(deps, result) };
    },
  };
}

export type DomainVerification = ReturnType<typeof domainVerification>;

/** For the operator (`svc admin domain verify`): each record as DNS should answer it, and why it does not. */
export interface RecordCheckView {
  record: string;
  type: string;
  name: string;
  expected: string;
  status: string;
  reason: string | null;
}

function recordChecks(deps: DomainsDeps, result: CheckResult): RecordCheckView[] {
  const states = parseStates(result.domain.record_states);
  return recordsOf(deps, result.domain, result.keys).map((r) => ({
    record: r.record, type: r.check.type, name: r.check.fqdn, expected: r.check.expected, status: statusOf(states, r),
    reason: statusOf(states, r) === 'verified' ? null : states[r.key]?.reason ?? null,
  }));
}

/**
 * A rotation completes when the new key's record verifies: the new key signs from then on, and
 * the old one stays published (retiring) through the grace period for mail still in flight.
 */
function promotions(deps: DomainsDeps, keys: readonly DkimKeyRow[], planned: readonly PlannedRecord[], states: RecordStates, now: Date): KeyChange[] {
  const pending = keys.find((k) => k.state === 'pending');
  if (!pending) return [];
  const record = planned.find((r) => r.dkimKeyId === pending.id);
  if (!record || states[record.key]?.status !== 'verified') return [];
  const retireAt = new Date(now.getTime() + deps.dkimGraceHours * 3600_000).toISOString();
  return [
    { id: pending.id, state: 'active', activated_at: now.toISOString() },
    ...keys.filter((k) => k.state === 'active').map((k) => ({ id: k.id, state: 'retiring' as const, retire_at: retireAt })),
  ];
}

async function refuseIfHeldElsewhere(deps: DomainsDeps, domain: DomainRow): Promise<void> {
  const owner = await domainsRepo(deps.db).owner(domain.name);
  if (owner && owner.id !== domain.id) throw heldElsewhere(domain.name);
}

const heldElsewhere = (name: string) =>
  new ServiceError(409, 'resource_locked', `The domain ${name} is verified on another team. To move it to this team, claim it with POST /domains/claim.`);
