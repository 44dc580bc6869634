import t from 'tap';
import { retryDelayMs } from '../../core/emails/index.js';
import { loadConfig } from '../../config/load.js';

// The retry schedule of deferred recipients with its jitter: each delay is brought forward by up to
// percent of itself (never later than the schedule), drawn from an injected random source, so
// tests are exact and mail deferred together spreads out.
t.setTimeout(30_000);

const fixed = (value: number) => ({ percent: 10, random: () => value });

t.test('without jitter: the schedule exactly', async (t) => {
  t.same([1, 2, 3, 4, 5, 6, 7, 8, 9, 20].map((n) => retryDelayMs(n) / 60_000), [1, 5, 15, 30, 60, 120, 240, 480, 480, 480]);
  t.equal(retryDelayMs(3, { percent: 0, random: () => 0.99 }), 15 * 60_000, 'percent 0 is no jitter');
});

t.test('the random draw brings the delay forward by up to percent, never later', async (t) => {
  t.equal(retryDelayMs(2, fixed(0)), 5 * 60_000, 'a draw of 0: the schedule itself');
  t.equal(retryDelayMs(2, fixed(0.5)), 4.75 * 60_000, 'half way: -5 %');
  t.equal(retryDelayMs(2, fixed(1)), 4.5 * 60_000, 'the far end: -10 %');
  t.equal(retryDelayMs(8, { percent: 25, random: () => 0.5 }), Math.round(480 * 60_000 * 0.875));
  t.equal(retryDelayMs(1, { percent: 90, random: () => 1 }), 30_000, 'the spread is capped at 50 %');
  t.equal(retryDelayMs(1, { percent: 10, random: () => 7 }), 54_000, 'a source outside [0, 1] is clamped');
  t.equal(retryDelayMs(1, { percent: 10, random: () => -3 }), 60_000);
});

t.test('mail deferred together comes back spread out', async (t) => {
  let seed = 42;
  // A small deterministic generator (LCG): the test needs variety, not security.
  const random = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31; };
  const delays = Array.from({ length: 200 }, () => retryDelayMs(4, { percent: 10, random }));
  t.ok(delays.every((d) => d >= 27 * 60_000 && d <= 30 * 60_000), 'every delay within 27 to 30 minutes');
  t.ok(new Set(delays).size > 150, `${new Set(delays).size} distinct due times out of 200`);
  t.ok(Math.min(...delays) < 27.5 * 60_000 && Math.max(...delays) > 29.5 * 60_000, 'the whole range is used');
});

t.test('outbound_retry_jitter_percent: 10 by default, bounded', async (t) => {
  t.equal(loadConfig({}).outbound_retry_jitter_percent, 10);
  t.equal(loadConfig({ SVC_OUTBOUND_RETRY_JITTER_PERCENT: '0' }).outbound_retry_jitter_percent, 0);
  t.throws(() => loadConfig({ SVC_OUTBOUND_RETRY_JITTER_PERCENT: '80' }), /SVC_OUTBOUND_RETRY_JITTER_PERCENT: must be at most 50/);
});
