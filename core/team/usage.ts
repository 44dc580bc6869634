import { teamsRepo, teamUsageRepo } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import { notFound } from '../errors.js';
import { dayPeriod, dayStart, monthPeriod, monthStart, type DailyLimitReason, type SendAllowance } from './allowance.js';
import type { PlanCatalog } from './plans.js';

// The send side of the billing object's `usage`: what the team sent this period (a UTC calendar
// month on an appliance) and today, against its plan. The contact figures are the contacts
// area's to add.

export interface SendUsage {
  period_start: string;
  period_end: string;
  emails: number;
  included_emails: number | null;
  emails_today: number;
  day_start: string;
  daily_limit: number | null;
  daily_limit_reason: DailyLimitReason;
  /** The plan's included emails, which an appliance enforces: nothing is billed past them. */
  monthly_limit: number | null;
}

export async function sendUsage(db: Db, plans: PlanCatalog, allowance: SendAllowance, teamId: string, now: Date): Promise<SendUsage> {
  const repo = teamsRepo(db);
  const team = await repo.byId(teamId);
  if (!team) throw notFound('Team');
  const plan = plans.of(team.plan_code);
  const [day, month] = [dayPeriod(now), monthPeriod(now)];
  const counts = await teamUsageRepo(db).read(teamId, [day, month]);
  const daily = await allowance.dailyLimit(repo, team, plan, now);
  return {
    period_start: monthStart(now).toISOString(),
    period_end: monthStart(now, 1).toISOString(),
    emails: counts[month]!,
    included_emails: plan.limits.included_emails,
    emails_today: counts[day]!,
    day_start: dayStart(now).toISOString(),
    daily_limit: daily.limit,
    daily_limit_reason: daily.reason,
    monthly_limit: plan.limits.included_emails,
  };
}
