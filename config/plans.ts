// The operator's plans: on an appliance the operator is the platform, so what a team may do
// (emails a month and a day, domains, webhook endpoints, retention, contacts) is set here, in
// config, and a team is put on a plan with `svc admin team plan`. A plan left out of a limit has
// no such limit; the built-in `default` plan has none at all, so a single-company install never
// meets one. Defining a plan with the code `default` puts limits on every team not given a plan.

export const planLimitNames = ['included_emails', 'daily_cap', 'domain_limit', 'webhook_endpoint_limit', 'retention_days', 'contacts'] as const;
export type PlanLimitName = (typeof planLimitNames)[number];

/** null: no limit. */
export type PlanLimitsSpec = Partial<Record<PlanLimitName, number | null>>;

export interface PlanRampSpec {
  /** Emails in the team's first 24 hours. */
  first_day: number;
  /** The daily limit the rest of the first week starts from, doubling each clean day (default twice first_day). */
  first_week?: number;
}

export interface PlanSpec {
  code: string;
  name: string;
  limits?: PlanLimitsSpec;
  /** The new-account ramp: a team's first week sends under a reduced daily limit. */
  ramp?: PlanRampSpec | null;
  /** A plan the operator charges for: its teams count as `paid` in their sending tier. */
  paid?: boolean;
}

const planKeys = ['code', 'name', 'limits', 'ramp', 'paid'];
const rampKeys = ['first_day', 'first_week'];
export const planCodeShape = /^[a-z0-9][a-z0-9_-]{0,62}$/;

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const wholeAtLeast = (v: unknown, min: number) => Number.isSafeInteger(v) && (v as number) >= min;

/** Returns a problem, or undefined when the value is a valid list of plans. */
export function checkPlans(value: unknown): string | undefined {
  if (!Array.isArray(value)) return 'must be a JSON array of plans';
  const codes = new Set<string>();
  for (const [i, plan] of value.entries()) {
    const problem = checkPlan(plan, `[${i}]`);
    if (problem) return problem;
    const code = (plan as PlanSpec).code;
    if (codes.has(code)) return `[${i}].code "${code}" is used twice`;
    codes.add(code);
  }
  return undefined;
}

function checkPlan(plan: unknown, at: string): string | undefined {
  if (!isObject(plan)) return `${at} must be an object`;
  const unknown = Object.keys(plan).find((k) => !planKeys.includes(k));
  if (unknown) return `${at}.${unknown} is not a plan setting (${planKeys.join(', ')})`;
  if (typeof plan.code !== 'string' || !planCodeShape.test(plan.code)) return `${at}.code must be lower-case letters, digits, _ or - (at most 63)`;
  if (typeof plan.name !== 'string' || plan.name.trim() === '' || plan.name.length > 80) return `${at}.name must be 1-80 characters`;
  if (plan.paid !== undefined && typeof plan.paid !== 'boolean') return `${at}.paid must be true or false`;
  if (plan.limits !== undefined) {
    if (!isObject(plan.limits)) return `${at}.limits must be an object`;
    for (const [name, limit] of Object.entries(plan.limits)) {
      if (!(planLimitNames as readonly string[]).includes(name)) return `${at}.limits.${name} is not a limit (${planLimitNames.join(', ')})`;
      if (limit !== null && !wholeAtLeast(limit, 0)) return `${at}.limits.${name} must be a whole number of at least 0, or null for none`;
    }
  }
  return plan.ramp === undefined || plan.ramp === null ? undefined : checkRamp(plan.ramp, `${at}.ramp`);
}

function checkRamp(ramp: unknown, at: string): string | undefined {
  if (!isObject(ramp)) return `${at} must be an object or null`;
  const unknown = Object.keys(ramp).find((k) => !rampKeys.includes(k));
  if (unknown) return `${at}.${unknown} is not a ramp setting (${rampKeys.join(', ')})`;
  if (!wholeAtLeast(ramp.first_day, 1)) return `${at}.first_day must be a whole number of at least 1`;
  if (ramp.first_week !== undefined && !wholeAtLeast(ramp.first_week, ramp.first_day as number)) return `${at}.first_week must be a whole number of at least first_day`;
  return undefined;
}
