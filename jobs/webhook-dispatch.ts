import type { Logger } from '../core/logger.js';
import type { WebhookDispatcher } from '../core/webhooks/index.js';
import { startLoop, type Loop } from './loop.js';

/**
 * The webhook dispatcher as a loop of the jobs role (not a cron job: new events should go out
 * within `pollMs`), woken at once when a replay is queued in this process. Several jobs
 * processes may run it: claims in the database keep them from sending a message twice.
 */
export function startWebhookDispatch(dispatcher: WebhookDispatcher, pollMs: number, logger: Logger): Loop {
  const loop = startLoop({ name: 'webhook-dispatch', idleMs: pollMs, logger, tick: () => dispatcher.tick() });
  const unlisten = dispatcher.wakes.listen(() => loop.wake());
  return {
    wake: () => loop.wake(),
    async stop() {
      unlisten();
      await loop.stop();
    },
  };
}
