import { sql } from 'kysely';
import type { Db } from '../sql/db.js';

// The operator's gauges that are facts of the database, read when /metrics is scraped: the
// outbound queue by region and state, and the webhook backlog. Each is one grouped count over an
// index on the state column, so a scrape costs the rows still in play, not the mail ever sent.

/** Recipient states still in play: waiting for a time, for a slot, for a reply, or for a report. */
const ACTIVE_STATES = ['scheduled', 'queued', 'held', 'submitting', 'ambiguous'] as const;

export interface QueueDepthRow {
  region: string;
  /** scheduled | queued (never tried) | deferred (queued after a failed attempt) | held | submitting | ambiguous. */
  state: string;
  count: number;
}

export interface WebhookBacklogRow {
  /** pending | delivering. */
  status: string;
  count: number;
  /** Of pending messages, those whose time has come. */
  due: number;
}

export function opsGaugesRepo(db: Db) {
  return {
    async queueDepth(): Promise<QueueDepthRow[]> {
      const rows = await db.selectFrom('email_recipients')
        .select(['region', 'state', sql<number>`count(*)`.as('count'), sql<number>`sum(case when attempts > 0 then 1 else 0 end)`.as('retried')])
        .where('state', 'in', ACTIVE_STATES).groupBy(['region', 'state']).execute();
      const out: QueueDepthRow[] = [];
      for (const row of rows) {
        const count = Number(row.count);
        const retried = Number(row.retried ?? 0);
        if (row.state !== 'queued') out.push({ region: row.region, state: row.state, count });
        else out.push({ region: row.region, state: 'queued', count: count - retried }, { region: row.region, state: 'deferred', count: retried });
      }
      return out;
    },

    async webhookBacklog(now: string): Promise<WebhookBacklogRow[]> {
      const rows = await db.selectFrom('webhook_deliveries')
        .select(['status', sql<number>`count(*)`.as('count'), sql<number>`sum(case when next_attempt_at <= ${now} then 1 else 0 end)`.as('due')])
        .where('status', 'in', ['pending', 'delivering']).groupBy('status').execute();
      return rows.map((r) => ({ status: r.status, count: Number(r.count), due: Number(r.due ?? 0) }));
    },
  };
}

export type OpsGaugesRepo = ReturnType<typeof opsGaugesRepo>;
