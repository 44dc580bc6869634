import { sweepAmbiguous } from '../core/emails/index.js';
import type { DeliveryRecorder } from '../core/emails/index.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Db } from '../storage/sql/index.js';
import type { Job } from './scheduler.js';

/** Every five minutes: ambiguous submissions older than two hours become failed (ambiguous_submission). */
export function ambiguousSweepJob(deps: { db: Db; clock: Clock; logger: Logger; recorder: DeliveryRecorder }): Job {
  return {
    name: 'ambiguous-sweep',
    schedule: '*/5 * * * *',
    leaseMs: 4 * 60_000,
    run: () => sweepAmbiguous(deps),
  };
}
