import type { WorkHandler } from '../work/index.js';
import type { MetricsRollup } from './rollup.js';

// The metrics rollup as durable work: one standing item (ROLLUP_WORK) that the jobs role's work
// runner holds under a lease, so one jobs process folds at a time and another takes over when it
// dies. Each step folds one batch in the worker's transaction (the rollup's own position moves
// with the rows, so nothing is counted twice however steps are cut short); with nothing to fold
// the item parks for `idleMs`. The API may still fold on demand before answering: both take the
// cursor's lock in turn.

export const ROLLUP_WORK = { kind: 'metrics-rollup', key: 'outbox' } as const;

export function rollupWork(rollup: MetricsRollup, idleMs: number): WorkHandler<Record<string, never>, null> {
  return {
    kind: ROLLUP_WORK.kind,
    async step() {
      if (!(await rollup.pending())) return { kind: 'continue', cursor: null, delayMs: idleMs };
      return { kind: 'continue', cursor: null, write: async (trx) => { await rollup.foldInto(trx); } };
    },
  };
}
