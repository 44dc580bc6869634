// When a deferred recipient is tried again: quickly at first (greylisting usually lifts within
// minutes), then further apart, up to every 8 hours until the queue lifetime ends.
const scheduleMinutes = [1, 5, 15, 30, 60, 120, 240, 480];

/**
 * Spread of the retry schedule: each delay is shortened by up to `percent` % of itself, drawn from
 * `random` (a number in [0, 1)). Without it, mail deferred together (a greylisting MX, an outage)
 * comes back together, in a burst, at every step. Only ever earlier: the schedule stays the latest
 * a retry comes, which is what the operator reads in the docs and what `svc admin queue` shows
 * as the bound. Not security-relevant: `Math.random` will do; tests hand in a fixed source.
 */
export interface RetryJitter {
  percent: number;
  random(): number;
}

/** Delay before the next try after `attempts` tries so far (1 = the first try failed). */
export function retryDelayMs(attempts: number, jitter?: RetryJitter): number {
  const index = Math.min(Math.max(attempts, 1), scheduleMinutes.length) - 1;
  const base = scheduleMinutes[index]! * 60_000;
  if (!jitter || jitter.percent <= 0) return base;
  const spread = Math.min(jitter.percent, 50) / 100;
  const r = Math.min(Math.max(jitter.random(), 0), 1);
  return Math.round(base * (1 - spread * r));
}
