import type { PlanLimitName, PlanSpec } from '../../config/plans.js';
import { ServiceError } from '../errors.js';

// The operator's plans (config `plans`), looked up by code. A team with no plan, or one whose
// plan was since taken out of the config, is on `default`: built in with no limits, or as the
// operator defined it.

export type PlanLimits = Record<PlanLimitName, number | null>;

export interface Plan {
  code: string;
  name: string;
  limits: PlanLimits;
  /** The new-account ramp; null: a new team sends under the plan's daily cap from the start. */
  ramp: { firstDay: number; firstWeek: number } | null;
  paid: boolean;
}

export const defaultPlanCode = 'default';

const noLimits: PlanLimits = {
  included_emails: null, daily_cap: null, domain_limit: null, webhook_endpoint_limit: null, retention_days: null, contacts: null,
};

export interface PlanCatalog {
  /** The plan of this code; `default` for null or a code no longer configured. */
  of(code: string | null): Plan;
  has(code: string): boolean;
  all(): Plan[];
}

export function planCatalog(specs: readonly PlanSpec[]): PlanCatalog {
  const plans = new Map<string, Plan>([[defaultPlanCode, { code: defaultPlanCode, name: 'Default', limits: noLimits, ramp: null, paid: false }]]);
  for (const spec of specs) {
    plans.set(spec.code, {
      code: spec.code,
      name: spec.name,
      limits: { ...noLimits, ...spec.limits },
      ramp: spec.ramp ? { firstDay: spec.ramp.first_day, firstWeek: spec.ramp.first_week ?? spec.ramp.first_day * 2 } : null,
      paid: spec.paid ?? false,
    });
  }
  const fallback = plans.get(defaultPlanCode)!;
  return {
    of: (code) => (code !== null && plans.get(code)) || fallback,
    has: (code) => plans.has(code),
    all: () => [...plans.values()],
  };
}

const limitWords: Partial<Record<PlanLimitName, string>> = {
  domain_limit: 'domains', webhook_endpoint_limit: 'webhook endpoints', contacts: 'contacts',
};

/**
 * Refuses one more of a counted resource (domains, webhook endpoints) when the team's plan
 * already has as many as it allows: 422 validation_error, the spec's "plan limit".
 */
export function checkPlanLimit(plan: Plan, limit: 'domain_limit' | 'webhook_endpoint_limit', current: number): void {
  const allowed = plan.limits[limit];
  if (allowed === null || current < allowed) return;
  const what = limitWords[limit]!;
  throw new ServiceError(422, 'validation_error', `The ${plan.name} plan allows at most ${allowed} ${what}; remove one first or ask the operator for another plan.`, {
    errors: [{ path: 'plan', message: `${limit} reached` }],
  });
}
