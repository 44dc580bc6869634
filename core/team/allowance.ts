import { teamsRepo, teamUsageRepo, type TeamsRepo } from '../../storage/repos/index.js';
import type { Db, TeamRow } from '../../storage/sql/index.js';
import { ServiceError } from '../errors.js';
import type { Plan, PlanCatalog } from './plans.js';
import { assertMaySend } from './standing.js';

// One sending allowance per team, spent by every send path (API, batch, and the campaign and
// SMTP paths as they come) in the transaction that accepts the mail. Counted per recipient svc
// will try to deliver (refused and suppressed recipients are uncharged).
//
// The truth is two counter rows in SQLite, the UTC day's and the UTC month's (team_usage). Each
// send adds to both with an UPDATE whose WHERE carries the cap, inside the accepting write
// transaction: SQLite runs one writer at a time (BEGIN IMMEDIATE), and PostgreSQL re-checks the
// condition against the row a concurrent writer committed, so two processes racing cannot pass a
// cap, and a refused send leaves nothing counted. Redis is not used: a counter there would need
// rebuilding from SQLite anyway, and the accepting transaction is already open.
//
// The daily cap resets at 00:00 UTC (a new day's row). With the plan's ramp, a team's first 24
// hours send under `first_day`; the rest of its first week under `first_week`, doubled for each
// clean day so far (a day with no complaint and bounces at most 5% of what was sent); never above
// the plan's own daily cap.

export type DailyLimitReason = 'new_account' | 'new_account_ramp' | null;

export interface DailyLimit {
  limit: number | null;
  reason: DailyLimitReason;
}

const dayMs = 86_400_000;
const rampDays = 7;

export const dayPeriod = (at: Date) => `d:${at.toISOString().slice(0, 10)}`;
export const monthPeriod = (at: Date) => `m:${at.toISOString().slice(0, 7)}`;
export const dayStart = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
export const monthStart = (at: Date, plus = 0) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + plus, 1));

export interface SendAllowance {
  /** Spends `count` from the team's allowance inside the caller's write transaction, or throws (403 suspended, 429 over a cap). */
  spend(trx: Db, teamId: string, count: number, now: Date): Promise<void>;
  dailyLimit(repo: TeamsRepo, team: TeamRow, plan: Plan, now: Date): Promise<DailyLimit>;
}

export function sendAllowance(plans: PlanCatalog): SendAllowance {
  // Clean days of past windows do not change: counted once per team and day of its first week.
  const cleanDaysSeen = new Map<string, number>();

  const cleanDays = async (repo: TeamsRepo, team: TeamRow, accountDay: number): Promise<number> => {
    const key = `${team.id}:${accountDay}`;
    const known = cleanDaysSeen.get(key);
    if (known !== undefined) return known;
    const created = Date.parse(team.created_at);
    let clean = 0;
    for (let day = 1; day < accountDay; day++) {
      const from = new Date(created + day * dayMs).toISOString();
      const to = new Date(created + (day + 1) * dayMs).toISOString();
      const [sent, bounced, complained] = await Promise.all(['email.sent', 'email.bounced', 'email.complained'].map((type) => repo.countEvents(team.id, type, from, to)));
      if (complained === 0 && bounced! * 20 <= sent!) clean++;
    }
    if (cleanDaysSeen.size > 10_000) cleanDaysSeen.clear();
    cleanDaysSeen.set(key, clean);
    return clean;
  };

  const dailyLimit = async (repo: TeamsRepo, team: TeamRow, plan: Plan, now: Date): Promise<DailyLimit> => {
    const cap = plan.limits.daily_cap;
    const age = now.getTime() - Date.parse(team.created_at);
    if (!plan.ramp || age >= rampDays * dayMs) return { limit: cap, reason: null };
    const within = (limit: number) => (cap === null ? limit : Math.min(limit, cap));
    if (age < dayMs) return { limit: within(plan.ramp.firstDay), reason: 'new_account' };
    const clean = await cleanDays(repo, team, Math.floor(age / dayMs));
    return { limit: within(plan.ramp.firstWeek * 2 ** clean), reason: 'new_account_ramp' };
  };

  return {
    dailyLimit,
    async spend(trx, teamId, count, now) {
      const repo = teamsRepo(trx);
      const team = await repo.byId(teamId);
      assertMaySend(team);
      if (count <= 0) return;
      const plan = plans.of(team!.plan_code);
      const daily = await dailyLimit(repo, team!, plan, now);
      const refused = await teamUsageRepo(trx).spend(teamId, [
        { period: dayPeriod(now), cap: daily.limit },
        { period: monthPeriod(now), cap: plan.limits.included_emails },
      ], count);
      if (refused === undefined) return;
      if (refused.startsWith('d:')) throw dailyQuotaExceeded(daily, now);
      throw monthlyQuotaExceeded(plan, now);
    },
  };
}

const secondsUntil = (now: Date, then: Date) => String(Math.max(1, Math.ceil((then.getTime() - now.getTime()) / 1000)));

function dailyQuotaExceeded(daily: DailyLimit, now: Date): ServiceError {
  const why = daily.reason === 'new_account' ? ' (a new team\'s first day)' : daily.reason === 'new_account_ramp' ? ' (a new team\'s first week; it doubles each clean day)' : '';
  return new ServiceError(429, 'daily_quota_exceeded', `This send would pass the team's daily limit of ${daily.limit} emails${why}. The limit resets at 00:00 UTC.`, {
    headers: { 'retry-after': secondsUntil(now, new Date(dayStart(now).getTime() + dayMs)) },
  });
}

function monthlyQuotaExceeded(plan: Plan, now: Date): ServiceError {
  return new ServiceError(429, 'monthly_quota_exceeded', `This send would pass the ${plan.limits.included_emails} emails a month of the ${plan.name} plan. The count starts again on the first of the month (UTC).`, {
    headers: { 'retry-after': secondsUntil(now, monthStart(now, 1)) },
  });
}
