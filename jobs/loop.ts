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
  /**
   * After a tick that found nothing: in how many ms work falls due, when the tick's owner knows.
   * The pause is cut to it (never below `minIdleMs`, never above `idleMs`).
   */
  dueIn?(): Promise<number | undefined>;
  logger: Logger;
}

/** The shortest pause after an idle tick, so that work due "now" but not claimable yet cannot spin. */
const minIdleMs = 10;

/**
 * The one shape of every long-running loop of the jobs role (the durable work runner, the webhook
 * dispatcher): ticks never overlap, a busy tick is followed at once by the next, an idle one by a
 * pause (shorter when work is known to fall due sooner), a wake cuts the pause short, and a tick
 * that throws is logged and tried again later.
 * Core offers the tick; the timer lives here.
 */
export function startLoop(options: LoopOptions): Loop {
  const { name, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let wanted = false;
  const tick = async (): Promise<'busy' | 'idle' | 'failed'> => {
    try {
      return (await options.tick()) ? 'busy' : 'idle';
    } catch (err) {
      logger.error({ job: name, err }, 'loop tick failed; tried again after a pause');
      return 'failed';
    }
  };
  const pauseAfterIdle = async (): Promise<number> => {
    const dueIn = await options.dueIn?.().catch((err: unknown) => {
      logger.error({ job: name, err }, 'loop could not tell when work falls due; pausing in full');
      return undefined;
    });
    return dueIn === undefined ? options.idleMs : Math.min(options.idleMs, Math.max(minIdleMs, dueIn));
  };
  const run = () => {
    timer = undefined;
    wanted = false;
    running = tick().then(async (outcome) => {
      // A failed tick pauses in full: its work may be due now and fail again at once.
      const pause = outcome === 'busy' ? 0 : outcome === 'idle' ? await pauseAfterIdle() : options.idleMs;
      running = undefined;
      schedule(wanted ? 0 : pause);
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
