import type { TeamRow } from '../../storage/sql/index.js';
import { ServiceError } from '../errors.js';
import { regionNames, type RegionDirectory, type RegionName } from '../regions.js';
import type { Plan } from './plans.js';

// A team's standing: its risk state and its sending tier.
//
// risk_state is `suspended` exactly when the operator suspended the team (`teams.status`, which
// authentication already reads: every key of a suspended team is 403 suspended_api_key, the
// spec's "team risk_state suspended"); otherwise `normal`.
//
// Sending tiers, as an appliance has them: 0 `new` (no domain that may send yet), 1 `verified`,
// 2 `paid` (on a plan the operator marked `paid`), 3 `trusted` (the operator reviewed the team:
// `svc admin team trust`). A trusted team is out of the sending sandbox; every other team sends
// under the sandbox of each region configured `sandbox: true`.

export type RiskState = 'normal' | 'suspended';
export const tierNames = ['new', 'verified', 'paid', 'trusted'] as const;
export type NextUnlock = 'verify_domain' | 'add_payment_method' | 'operator_review';

export interface SendingStanding {
  sandbox_regions: RegionName[];
  tier: 0 | 1 | 2 | 3;
  tier_name: (typeof tierNames)[number];
  next_unlock: NextUnlock | null;
}

export const riskStateOf = (team: Pick<TeamRow, 'status'>): RiskState => (team.status === 'suspended' ? 'suspended' : 'normal');

export function sendingStanding(team: Pick<TeamRow, 'trusted_at'>, plan: Plan, hasSendingDomain: boolean, regions: RegionDirectory): SendingStanding {
  const tier = team.trusted_at ? 3 : !hasSendingDomain ? 0 : plan.paid ? 2 : 1;
  // Nobody pays an appliance by card: past a verified domain, the next step is the operator's.
  const next_unlock: NextUnlock | null = tier === 0 ? 'verify_domain' : tier === 3 ? null : 'operator_review';
  const sandbox_regions = tier === 3 ? [] : regionNames.filter((name) => regions(name).sandbox);
  return { sandbox_regions, tier, tier_name: tierNames[tier], next_unlock };
}

/** Whether the team has left the sending sandbox (the operator trusted it). */
export const leftSandbox = (team: Pick<TeamRow, 'trusted_at'>): boolean => team.trusted_at !== null;

/** A suspended team sends nothing, by whatever path (403, the spec's suspended team). */
export function assertMaySend(team: Pick<TeamRow, 'status'> | undefined): void {
  if (!team) throw new ServiceError(404, 'not_found', 'Team not found');
  if (team.status === 'suspended') throw new ServiceError(403, 'suspended_api_key', 'This team is suspended and cannot send.');
}
