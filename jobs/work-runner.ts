import type { Logger } from '../core/logger.js';
import type { DurableWorker } from '../core/work/index.js';
import { startLoop, type Loop } from './loop.js';

/**
 * The durable worker's timer: runs what is due, again at once while there was work, otherwise
 * every `pollMs` (parked items wake at their due time, lapsed leases are taken again).
 */
export function startWorkRunner(worker: DurableWorker, pollMs: number, logger: Logger): Loop {
  return startLoop({ name: 'work-runner', idleMs: pollMs, logger, tick: async () => (await worker.runDue()) > 0 });
}
