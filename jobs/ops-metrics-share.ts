import type { Logger } from '../core/logger.js';
import { startLoop, type Loop } from './loop.js';

/**
 * The timer of a process that does not serve /metrics itself: every `intervalMs` it hands its
 * figures over (bin/ops-exposition.ts publishes them where the serving process reads them).
 */
export function startOpsMetricsShare(options: { publish(): Promise<void>; intervalMs: number; logger: Logger }): Loop {
  return startLoop({
    name: 'ops-metrics-share', idleMs: options.intervalMs, logger: options.logger,
    tick: async () => {
      await options.publish();
      return false;
    },
  });
}
