import type { Clock } from '../core/clock.js';
import { pruneIdempotencyKeys } from '../core/idempotency.js';
import type { Db } from '../storage/sql/index.js';
import type { Job } from './scheduler.js';

/** Hourly: idempotent answers past their 24-hour replay window are deleted. */
export function pruneIdempotencyKeysJob(db: Db, clock: Clock): Job {
  return {
    name: 'prune-idempotency-keys',
    schedule: '41 * * * *',
    leaseMs: 10 * 60_000,
    run: () => pruneIdempotencyKeys(db, clock),
  };
}
