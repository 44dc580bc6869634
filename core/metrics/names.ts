import type { MetricCount, MetricCounters } from '../../storage/repos/index.js';

// The spec's metric names (Metrics names). Counts come straight from the rollups; rates are
// fractions 0-1 (not percentages) computed from the summed counts of the same row, 0 when the
// denominator is 0. `unsubscribed` and `unsubscribe_rate` are known names that stay 0 until
// unsubscribes exist (no event reports one yet).

export const countNames = [
  'received', 'delivered', 'complained', 'suppressed', 'bounced', 'bounced_transient', 'bounced_permanent',
  'bounced_undetermined', 'opened', 'clicked', 'unsubscribed', 'delivery_delayed', 'failed', 'sent',
  'unique_opened', 'unique_clicked', 'attempted',
] as const satisfies readonly MetricCount[];

export const rateDefinitions = {
  delivery_rate: ['delivered', 'sent'],
  open_rate: ['opened', 'delivered'],
  click_rate: ['clicked', 'delivered'],
  bounce_rate: ['bounced', 'sent'],
  complaint_rate: ['complained', 'sent'],
  unsubscribe_rate: ['unsubscribed', 'delivered'],
} as const satisfies Record<string, readonly [MetricCount, MetricCount]>;

export type CountName = (typeof countNames)[number];
export type RateName = keyof typeof rateDefinitions;
export type MetricName = CountName | RateName;

/** Every name, in the order a response lists them when the caller asks for all. */
export const metricNames: readonly MetricName[] = [...countNames, ...(Object.keys(rateDefinitions) as RateName[])];

export const isMetricName = (value: string): value is MetricName => (metricNames as readonly string[]).includes(value);

/** The requested metrics of one row (or of the totals), counts as they are and rates as fractions, written into `into`. */
export function metricValues<T extends object>(counters: MetricCounters, names: readonly MetricName[], into: T = {} as T): T & Record<string, number> {
  const out = into as T & Record<string, number>;
  for (const name of names) {
    const rate = (rateDefinitions as Record<string, readonly [MetricCount, MetricCount]>)[name];
    if (rate) {
      const denominator = counters[rate[1]];
      (out as Record<string, number>)[name] = denominator === 0 ? 0 : counters[rate[0]] / denominator;
    } else {
      (out as Record<string, number>)[name] = counters[name as CountName];
    }
  }
  return out;
}

/**
 * The counters with machine opens and clicks left out (`exclude_machine=true`): opened and clicked
 * less the flagged hits, the unique counts taken at each email's first hit no machine made. The
 * rates follow, being computed from these.
 */
export function withoutMachines(counters: MetricCounters): MetricCounters {
  return {
    ...counters,
    opened: counters.opened - counters.machine_opened,
    clicked: counters.clicked - counters.machine_clicked,
    unique_opened: counters.unique_opened_human,
    unique_clicked: counters.unique_clicked_human,
  };
}
