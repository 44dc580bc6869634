// Row types of the metrics rollups (migration 007). Kept beside the repo; tables.ts lists them.

/** Every counter a rollup row carries, in one order used everywhere (SQL, sums, tests). */
export const metricCounts = [
  'received', 'sent', 'delivered', 'delivery_delayed', 'bounced', 'bounced_permanent', 'bounced_transient',
  'bounced_undetermined', 'complained', 'opened', 'clicked', 'unique_opened', 'unique_clicked', 'failed',
  'suppressed', 'attempted', 'unsubscribed',
  // Machine hits (migration 020): flagged opens and clicks, and unique counts without them.
  'machine_opened', 'machine_clicked', 'unique_opened_human', 'unique_clicked_human',
] as const;

export type MetricCount = (typeof metricCounts)[number];

export type MetricCounters = Record<MetricCount, number>;

export interface MetricsMinuteRow extends MetricCounters {
  team_id: string;
  /** Minutes since the Unix epoch (UTC): the bucket is [minute, minute + 1). */
  minute: number;
  /** '' when the event has no sending or receiving domain. */
  domain_id: string;
  /** '' for mail that is not part of a broadcast. */
  broadcast_id: string;
}

/** A quarter-hour rollup row: `minute` is the quarter's first minute (a multiple of 15). */
export type MetricsQuarterRow = MetricsMinuteRow;

export interface MetricsEmailMinuteRow extends MetricsMinuteRow {
  email_id: string;
}

/** An email already counted once for `kind` (attempted | opened | clicked), and when. */
export interface MetricsEmailMarkRow {
  email_id: string;
  kind: string;
  minute: number;
}

export interface MetricsDomainRow {
  id: string;
  team_id: string;
  name: string;
}
