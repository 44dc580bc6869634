import { type Kysely } from 'kysely';

// Outbound TLS: MTA-STS (RFC 8461) and TLS-RPT (RFC 8460).
// - mta_sts_policies: each recipient domain's last fetched policy, kept for its max_age. In SQLite,
//   not Redis: a cached policy is what protects the next delivery when an attacker blocks the
//   policy fetch (RFC 8461 section 10.2), so losing it is not something a rebuild could undo.
// - tls_rpt_counts: per UTC day, policy domain, MX host and result (`success` or an RFC 8460
//   result type), how many sessions ended so; the outbound role adds its in-memory counts.
// - tls_rpt_reports: one row per (policy domain, day) once its report was sent or needed none.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('mta_sts_policies')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('policy_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('max_age', 'integer', (c) => c.notNull())
    .addColumn('mx', 'text', (c) => c.notNull())
    .addColumn('policy_text', 'text', (c) => c.notNull())
    .addColumn('fetched_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createTable('tls_rpt_counts')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('policy_domain', 'text', (c) => c.notNull())
    .addColumn('policy_id', 'text', (c) => c.notNull())
    .addColumn('mx_host', 'text', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('sessions', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('tls_rpt_counts_pk', ['day', 'policy_domain', 'policy_id', 'mx_host', 'result'])
    .execute();
  await db.schema.createTable('tls_rpt_reports')
    .addColumn('policy_domain', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('tls_rpt_reports_pk', ['policy_domain', 'day'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tls_rpt_reports').execute();
  await db.schema.dropTable('tls_rpt_counts').execute();
  await db.schema.dropTable('mta_sts_policies').execute();
}
