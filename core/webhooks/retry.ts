import type { SendOutcome } from './ports.js';

/** Waits after the 1st, 2nd, … failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then failed. */
export const retryDelaysMs: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

export type AttemptDecision =
  | { kind: 'succeeded' }
  | { kind: 'retry'; delayMs: number }
  /** `gone`: 410 — the endpoint is disabled too. */
  | { kind: 'failed'; reason: 'exhausted' | 'aborted' | 'gone' };

/** What follows attempt number `attemptsMade` (1-based) given its outcome. */
export function decide(outcome: SendOutcome, attemptsMade: number): AttemptDecision {
  const status = outcome.statusCode;
  if (status !== null && status >= 200 && status < 300) return { kind: 'succeeded' };
  if (status === 410) return { kind: 'failed', reason: 'gone' };
  if (outcome.abort) return { kind: 'failed', reason: 'aborted' };
  const delayMs = retryDelaysMs[attemptsMade - 1];
  return delayMs === undefined ? { kind: 'failed', reason: 'exhausted' } : { kind: 'retry', delayMs };
}
