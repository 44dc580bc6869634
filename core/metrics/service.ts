import type { Db } from '../../storage/sql/index.js';
import { metricCounts, metricsQueryRepo, type MetricCounters, type MetricsAggregateRow, type MetricsQueryRepo } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { metricValues, withoutMachines } from './names.js';
import { atMinute, bucketOf, minuteOf, periodsOf, type Granularity, type Periods } from './periods.js';
import { parseMetricsQuery, type Dimension, type MetricsQuery, type RawMetricsQuery } from './query.js';
import { ROLLUP_CURSOR, type MetricsRollup } from './rollup.js';

// GET /emails/metrics, answered from the minute rollups with one aggregate query. Before it reads,
// the endpoint folds what the outbox holds beyond the rollup's position (up to a bound), so an
// answer includes events written a moment ago even when the jobs role's loop has not run yet.

export interface MetricsDataRow {
  period?: string;
  domain_id?: string | null;
  domain_name?: string | null;
  email_id?: string;
  broadcast_id?: string;
  broadcast_name?: string | null;
  [metric: string]: string | number | null | undefined;
}

export interface MetricsView {
  object: 'metrics';
  start_date: string;
  end_date: string;
  metrics: string[];
  dimensions: Dimension[];
  granularity: Granularity;
  /** Events up to this instant (a minute boundary) are in the figures. */
  data_as_of: string;
  totals: { [metric: string]: number };
  /** Absent (not empty) when no dimension was asked for. */
  data?: MetricsDataRow[];
}

export interface MetricsServiceDeps {
  db: Db;
  clock: Clock;
  rollup: MetricsRollup;
  logger: Logger;
  /** Outbox events a request may fold before answering; 0 leaves it all to the jobs role. */
  catchUpEvents: number;
}

interface Group {
  bucket: number;
  domainId?: string;
  emailId?: string;
  broadcastId?: string;
  counters: MetricCounters;
}

const ZERO = Object.freeze(Object.fromEntries(metricCounts.map((c) => [c, 0]))) as MetricCounters;
const zero = (): MetricCounters => ({ ...ZERO });

function addInto(target: MetricCounters, row: MetricCounters) {
  for (const c of metricCounts) target[c] += row[c];
}

const byText = (a: string | undefined, b: string | undefined) => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0);

/** Rows of the aggregate folded into one group per (period, domain, email, broadcast) asked for. */
function groupRows(rows: MetricsAggregateRow[], query: MetricsQuery, periods: Periods | undefined): Group[] {
  const byDomain = query.dimensions.includes('domain');
  const byEmail = query.dimensions.includes('email');
  const byBroadcast = query.dimensions.includes('broadcast');
  const groups = new Map<string, Group>();
  const keyOf = (bucket: number, domainId?: string, emailId?: string, broadcastId?: string) => `${bucket} ${domainId ?? ''} ${emailId ?? ''} ${broadcastId ?? ''}`;
  if (periods && query.dimensions.length === 1) {
    // A period series alone lists every bucket of the window, empty ones as zeros.
    periods.labels.forEach((_, bucket) => groups.set(keyOf(bucket), { bucket, counters: zero() }));
  }
  const bucketOfSlot = new Map<number, number>();
  for (const row of rows) {
    let bucket = 0;
    if (periods) {
      bucket = bucketOfSlot.get(row.slot!) ?? bucketOf(periods, row.slot! * periods.quantum);
      bucketOfSlot.set(row.slot!, bucket);
    }
    const domainId = byDomain ? row.domain_id : undefined;
    const emailId = byEmail ? row.email_id : undefined;
    const broadcastId = byBroadcast ? row.broadcast_id : undefined;
    const key = keyOf(bucket, domainId, emailId, broadcastId);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { bucket, domainId, emailId, broadcastId, counters: zero() }));
    addInto(group.counters, row);
  }
  return [...groups.values()].sort((a, b) => a.bucket - b.bucket
    || byText(a.domainId, b.domainId) || byText(a.emailId, b.emailId) || byText(a.broadcastId, b.broadcastId));
}

async function dataRows(repo: MetricsQueryRepo, teamId: string, groups: Group[], query: MetricsQuery, periods: Periods | undefined): Promise<MetricsDataRow[]> {
  const byDomain = query.dimensions.includes('domain');
  const byEmail = query.dimensions.includes('email');
  const byBroadcast = query.dimensions.includes('broadcast');
  const names = byDomain ? await repo.domainNames(teamId, [...new Set(groups.map((g) => g.domainId!).filter(Boolean))]) : new Map<string, string>();
  const broadcastNames = byBroadcast ? await repo.broadcastNames(teamId, [...new Set(groups.map((g) => g.broadcastId!).filter(Boolean))]) : new Map<string, string>();
  return groups.map((g) => {
    const row: MetricsDataRow = {};
    if (periods) row.period = periods.labels[g.bucket]!;
    if (byDomain) {
      row.domain_id = g.domainId || null;
      row.domain_name = (g.domainId && names.get(g.domainId)) || null;
    }
    if (byEmail) row.email_id = g.emailId!;
    if (byBroadcast) {
      row.broadcast_id = g.broadcastId!;
      row.broadcast_name = broadcastNames.get(g.broadcastId!) ?? null;
    }
    return metricValues(query.excludeMachine ? withoutMachines(g.counters) : g.counters, query.metrics, row);
  });
}

/** The last completed minute, or the minute of the oldest event not folded yet if earlier. */
async function dataAsOf(repo: MetricsQueryRepo, now: Date): Promise<string> {
  const pending = await repo.firstPending(ROLLUP_CURSOR);
  const complete = minuteOf(now);
  const minute = pending ? Math.min(complete, minuteOf(new Date(pending.created_at))) : complete;
  return atMinute(minute).toISOString();
}

export function metricsService(deps: MetricsServiceDeps) {
  const repo = metricsQueryRepo(deps.db);
  return {
    async get(teamId: string, raw: RawMetricsQuery): Promise<MetricsView> {
      const now = deps.clock.now();
      const query = parseMetricsQuery(raw, now);
      if (deps.catchUpEvents > 0) {
        // A busy database must not fail the read: the answer then comes from the rollups as they
        // are, and data_as_of says how far they reach.
        await deps.rollup.catchUp(deps.catchUpEvents).catch((err: unknown) => {
          deps.logger.warn({ err, teamId }, 'metrics: folding pending events before answering failed; answering from the rollups as they are');
        });
      }
      const has = (d: Dimension) => query.dimensions.includes(d);
      const periods = has('period') ? periodsOf(query.window, query.granularity) : undefined;
      const rows = await repo.aggregate({
        teamId,
        fromMinute: minuteOf(query.window.start),
        toMinute: minuteOf(query.window.end),
        perEmail: has('email') || query.emailIds !== undefined,
        domainIds: query.domainIds,
        emailIds: query.emailIds,
        broadcastIds: query.broadcastIds,
        broadcastsOnly: has('broadcast'),
        group: { quantum: periods?.quantum, domain: has('domain'), email: has('email'), broadcast: has('broadcast') },
      });
      const totals = zero();
      for (const row of rows) addInto(totals, row);
      const view: MetricsView = {
        object: 'metrics',
        start_date: query.window.start.toJSDate().toISOString(),
        end_date: query.window.end.toJSDate().toISOString(),
        metrics: query.metrics,
        dimensions: query.dimensions,
        granularity: query.granularity,
        data_as_of: await dataAsOf(repo, now),
        totals: metricValues(query.excludeMachine ? withoutMachines(totals) : totals, query.metrics),
      };
      if (query.dimensions.length > 0) view.data = await dataRows(repo, teamId, groupRows(rows, query, periods), query, periods);
      return view;
    },
  };
}

export type MetricsService = ReturnType<typeof metricsService>;
