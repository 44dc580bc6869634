import type { Logger } from '../core/logger.js';

export interface Loop {
  /** Run the tick now (new work arrived), or right after the one running. */
  wake(): void;
  /** No new ticks; waits for the one running. */
  stop(): Promise<void>;
}

export interface LoopOptions {
  name: string;
  /** Pause between two ticks that found nothing to do. */
  idleMs: number;
  /** One pass over due work; true when it did some (the next tick then runs at once). */
  tick(): Promise<boolean>;
  logger: Logger;
}

/**
 * The one shape of every long-running loop of the jobs role (the durable work runner, the webhook
 * dispatcher): ticks never overlap, a busy tick is followed at once by the next, an idle one by a
 * pause, a wake cuts the pause short, and a tick that throws is logged and tried again later.
 * Core offers the tick; the timer lives here.
 */
export function startLoop(options: LoopOptions): Loop {
  const { name, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let wanted = false;
  const tick = async (): Promise<boolean> => {
    try {
      return await options.tick();
    } catch (err) {
      logger.error({ job: name, err }, 'loop tick failed; tried again after a pause');
      return false;
    }
  };
  const run = () => {
    timer = undefined;
    wanted = false;
    running = tick().then((busy) => {
      running = undefined;
      schedule(busy || wanted ? 0 : options.idleMs);
    });
  };
  const schedule = (ms: number) => {
    if (stopped || running) return;
    clearTimeout(timer);
    timer = setTimeout(run, ms);
  };
  schedule(0);
  logger.info({ job: name, idleMs: options.idleMs }, 'loop started');
  return {
    wake() {
      wanted = true;
      schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      logger.info({ job: name }, 'loop stopped');
    },
  };
}
