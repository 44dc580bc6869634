import type { Logger } from '../core/logger.js';
import type { DurableWorker } from '../core/work/index.js';

export interface WorkRunner {
  /** Looks for due work now (after an enqueue). */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * The durable worker's timer: runs what is due, again at once while there was work, otherwise
 * every `pollMs` (parked items wake at their due time, lapsed leases are taken again).
 */
export function startWorkRunner(worker: DurableWorker, pollMs: number, logger: Logger): WorkRunner {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let wanted = false;
  const tick = async (): Promise<boolean> => {
    try {
      return (await worker.runDue()) > 0;
    } catch (err) {
      logger.error({ job: 'work-runner', err }, 'claiming due work failed; retrying on the next tick');
      return false;
    }
  };
  const loop = async () => {
    wanted = false;
    const busy = await tick();
    schedule(busy || wanted ? 0 : pollMs);
  };
  const schedule = (ms: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => { current = loop(); }, ms);
  };
  schedule(0);
  logger.info({ job: 'work-runner', pollMs }, 'work runner started');
  return {
    wake() {
      wanted = true;
      schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current.catch(() => undefined);
      logger.info({ job: 'work-runner' }, 'work runner stopped');
    },
  };
}
