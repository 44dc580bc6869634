import { sql } from 'kysely';
import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';

export type { TeamUsageRow } from './team-tables.js';

/** One counter to spend from: a period row and its cap (null: count only). */
export interface UsageSpend {
  period: string;
  cap: number | null;
}

export interface TeamUsageRepo {
  /**
   * Adds `count` to each period's counter, each only while it stays within its cap. Call inside a
   * write transaction: answers the first period that would pass its cap (the caller then throws,
   * rolling back what was added), or undefined when every counter took it.
   */
  spend(teamId: string, spends: readonly UsageSpend[], count: number): Promise<string | undefined>;
  /** The counters of these periods (0 for a period with no row). */
  read(teamId: string, periods: readonly string[]): Promise<Record<string, number>>;
  /** Days (`d:` periods) from `fromPeriod` to `toPeriod` inclusive with their counts. */
  days(teamId: string, fromPeriod: string, toPeriod: string): Promise<{ period: string; emails: number }[]>;
  /**
   * Contacts the plan bills: subscribed (not unsubscribed, not `never_subscribed`), whose effective
   * subscription is `opt_in` on at least one live topic, and not on the suppression list.
   */
  countBillableContacts(teamId: string): Promise<number>;
  /** Raises a peak row (`p:` periods keep their figure in the counter) to `value`; answers the peak. */
  raisePeak(teamId: string, period: string, value: number): Promise<number>;
}

export function teamUsageRepo(db: Db): TeamUsageRepo {
  return {
    // Compiled once per shape: every accepted email spends from its team's counters.
    async spend(teamId, spends, count) {
      const ensure = shapedStatement(db, 'team_usage.ensure', (m) => db.insertInto('team_usage')
        .values({ team_id: m('team'), period: m('period'), emails: sql<number>`0` })
        .onConflict((oc) => oc.columns(['team_id', 'period']).doNothing()));
      for (const { period, cap } of spends) {
        await ensure(db, { team: teamId, period });
        // The cap is part of the UPDATE's condition: the row changes only if the sum stays
        // within it. PostgreSQL re-checks the condition on the row a concurrent writer left.
        const add = shapedStatement(db, `team_usage.add|${cap !== null}`, (m) => {
          const q = db.updateTable('team_usage').set({ emails: sql`emails + ${m('count')}` })
            .where('team_id', '=', m('team')).where('period', '=', m('period'));
          return cap === null ? q : q.where(sql<boolean>`emails + ${m('count')} <= ${m('cap')}`);
        });
        const result = await add(db, { team: teamId, period, count, cap });
        if ((result.numAffectedRows ?? 0n) === 0n) return period;
      }
      return undefined;
    },
    async read(teamId, periods) {
      const out: Record<string, number> = Object.fromEntries(periods.map((p) => [p, 0]));
      if (periods.length === 0) return out;
      const rows = await db.selectFrom('team_usage').select(['period', 'emails']).where('team_id', '=', teamId).where('period', 'in', [...periods]).execute();
      for (const row of rows) out[row.period] = Number(row.emails);
      return out;
    },
    days: async (teamId, fromPeriod, toPeriod) => (await db.selectFrom('team_usage').select(['period', 'emails'])
      .where('team_id', '=', teamId).where('period', '>=', fromPeriod).where('period', '<=', toPeriod).orderBy('period').execute())
      .map((r) => ({ period: r.period, emails: Number(r.emails) })),
    async countBillableContacts(teamId) {
      const row = await db.selectFrom('contacts as c').select(sql<number>`count(*)`.as('n'))
        .where('c.team_id', '=', teamId).where('c.subscription_status', '=', 'subscribed')
        .where(({ exists, not, selectFrom }) => not(exists(selectFrom('suppressions as s').select(sql`1`.as('one'))
          .whereRef('s.team_id', '=', 'c.team_id').whereRef('s.email_key', '=', 'c.email_key'))))
        .where(({ exists, selectFrom }) => exists(selectFrom('topics as t')
          .leftJoin('contact_topics as ct', (j) => j.onRef('ct.topic_id', '=', 't.id').onRef('ct.contact_id', '=', 'c.id'))
          .select(sql`1`.as('one'))
          .whereRef('t.team_id', '=', 'c.team_id').where('t.deleted_at', 'is', null)
          .where(sql<boolean>`coalesce(ct.subscription, t.default_subscription) = 'opt_in'`)))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async raisePeak(teamId, period, value) {
      await db.insertInto('team_usage').values({ team_id: teamId, period, emails: value })
        .onConflict((oc) => oc.columns(['team_id', 'period']).doUpdateSet({
          emails: sql`case when team_usage.emails > excluded.emails then team_usage.emails else excluded.emails end`,
        })).execute();
      const row = await db.selectFrom('team_usage').select('emails').where('team_id', '=', teamId).where('period', '=', period).executeTakeFirst();
      return Number(row?.emails ?? value);
    },
  };
}
