import type { Logger } from '../core/logger.js';
import type { MetricsRollup } from '../core/metrics/index.js';

export interface RunningLoop {
  stop(): Promise<void>;
}

/**
 * The metrics rollup as a loop of the jobs role: every `intervalMs` it folds what the outbox holds
 * beyond its position. Not a cron job with a Redis lock: several processes may run it (and the
 * API folds on demand before answering); the rollup's own transaction keeps them from counting an
 * event twice, and a restart resumes from the stored position.
 */
export function startMetricsRollup(rollup: MetricsRollup, intervalMs: number, logger: Logger): RunningLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const tick = async () => {
    try {
      const started = performance.now();
      const { events } = await rollup.catchUp();
      if (events > 0) logger.debug({ job: 'metrics-rollup', events, ms: Math.round(performance.now() - started) }, 'metrics rolled up');
    } catch (err) {
      logger.error({ job: 'metrics-rollup', err }, 'metrics rollup failed; retrying on the next tick');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      current = tick().finally(schedule);
    }, intervalMs);
  };
  current = tick().finally(schedule);
  logger.info({ job: 'metrics-rollup', intervalMs }, 'metrics rollup loop started');
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current.catch(() => undefined);
      logger.info({ job: 'metrics-rollup' }, 'metrics rollup loop stopped');
    },
  };
}
