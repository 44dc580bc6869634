import { teamsRepo, teamUsageRepo } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import { notFound } from '../errors.js';
import { dayPeriod, dayStart, monthPeriod, monthStart, type DailyLimitReason, type SendAllowance } from './allowance.js';
import type { PlanCatalog } from './plans.js';

// The billing object's `usage`: what the team sent this period (a UTC calendar month on an
// appliance) and today, against its plan, and its billable contacts with the month's peak. An
// appliance bills nothing: past the plan's contacts new ones are refused (no pay-as-you-go), so
// the overage rate is null and its estimate 0.

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
  contacts_included: number | null;
  billable_contacts: number;
  /** The highest billable count seen this period: sampled hourly by the jobs role and on every read. */
  peak_billable_contacts: number;
  contact_overage_per_1000_cents: number | null;
  estimated_contact_overage_cents: number;
}

/** The `p:` period holding a month's peak of billable contacts. */
export const peakPeriod = (at: Date) => `p:${at.toISOString().slice(0, 7)}`;

/** Counts the team's billable contacts now and raises the month's peak to it. */
export async function sampleBillableContacts(db: Db, teamId: string, now: Date): Promise<{ billable: number; peak: number }> {
  const repo = teamUsageRepo(db);
  const billable = await repo.countBillableContacts(teamId);
  return { billable, peak: await repo.raisePeak(teamId, peakPeriod(now), billable) };
}

/** Hourly (jobs role): every team's peak of billable contacts, so a peak between reads is kept. */
export async function sampleAllBillableContacts(db: Db, now: Date): Promise<{ teams: number }> {
  const teams = await teamsRepo(db).list();
  for (const team of teams) await sampleBillableContacts(db, team.id, now);
  return { teams: teams.length };
}

export async function sendUsage(db: Db, plans: PlanCatalog, allowance: SendAllowance, teamId: string, now: Date): Promise<SendUsage> {
  const repo = teamsRepo(db);
  const team = await repo.byId(teamId);
  if (!team) throw notFound('Team');
  const plan = plans.of(team.plan_code);
  const [day, month] = [dayPeriod(now), monthPeriod(now)];
  const counts = await teamUsageRepo(db).read(teamId, [day, month]);
  const daily = await allowance.dailyLimit(repo, team, plan, now);
  const contacts = await sampleBillableContacts(db, teamId, now);
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
    contacts_included: plan.limits.contacts,
    billable_contacts: contacts.billable,
    peak_billable_contacts: contacts.peak,
    contact_overage_per_1000_cents: null,
    estimated_contact_overage_cents: 0,
  };
}
