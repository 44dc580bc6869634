import type { Db } from '../sql/db.js';
import type { MtaStsPolicyRow, TlsRptCountRow, TlsRptReportRow } from './outbound-tls-tables.js';

export type { MtaStsPolicyRow, TlsRptCountRow, TlsRptReportRow } from './outbound-tls-tables.js';

// MTA-STS policies kept for their max_age, and the TLS-RPT session counts reports are built from.

export async function mtaStsPolicy(db: Db, domain: string): Promise<MtaStsPolicyRow | undefined> {
  return db.selectFrom('mta_sts_policies').selectAll().where('domain', '=', domain).executeTakeFirst();
}

export async function saveMtaStsPolicy(db: Db, row: MtaStsPolicyRow): Promise<void> {
  const { domain: _domain, ...rest } = row;
  await db.insertInto('mta_sts_policies').values(row).onConflict((oc) => oc.column('domain').doUpdateSet(rest)).execute();
}

/** Adds session counts (one transaction); a row that exists grows by the count. */
export async function addTlsRptCounts(db: Db, rows: readonly TlsRptCountRow[]): Promise<void> {
  if (!rows.length) return;
  await db.transaction().execute(async (trx) => {
    for (const row of rows) {
      await trx.insertInto('tls_rpt_counts').values(row)
        .onConflict((oc) => oc.columns(['day', 'policy_domain', 'policy_id', 'mx_host', 'result'])
          .doUpdateSet((eb) => ({ sessions: eb('tls_rpt_counts.sessions', '+', eb.ref('excluded.sessions')) })))
        .execute();
    }
  });
}

/** (policy domain, day) pairs with counts before `beforeDay` and no report row yet. */
export async function unreportedTlsRptDays(db: Db, beforeDay: string): Promise<{ policy_domain: string; day: string }[]> {
  return db.selectFrom('tls_rpt_counts as c')
    .select(['c.policy_domain', 'c.day'])
    .where('c.day', '<', beforeDay)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('tls_rpt_reports as r').select('r.day')
      .whereRef('r.policy_domain', '=', 'c.policy_domain').whereRef('r.day', '=', 'c.day'))))
    .groupBy(['c.policy_domain', 'c.day'])
    .orderBy('c.day').orderBy('c.policy_domain')
    .execute();
}

export async function tlsRptCountsOf(db: Db, policyDomain: string, day: string): Promise<TlsRptCountRow[]> {
  return db.selectFrom('tls_rpt_counts').selectAll().where('policy_domain', '=', policyDomain).where('day', '=', day)
    .orderBy('policy_id').orderBy('mx_host').orderBy('result').execute();
}

export async function markTlsRptReported(db: Db, row: TlsRptReportRow): Promise<void> {
  await db.insertInto('tls_rpt_reports').values(row)
    .onConflict((oc) => oc.columns(['policy_domain', 'day']).doUpdateSet({ outcome: row.outcome, detail: row.detail, at: row.at })).execute();
}

/** Counts and report rows of days before `beforeDay` go (they were reported, or are too old to be). */
export async function pruneTlsRpt(db: Db, beforeDay: string): Promise<number> {
  const counts = await db.deleteFrom('tls_rpt_counts').where('day', '<', beforeDay).executeTakeFirst();
  await db.deleteFrom('tls_rpt_reports').where('day', '<', beforeDay).execute();
  return Number(counts.numDeletedRows ?? 0n);
}
