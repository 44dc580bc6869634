import type { WebhookDispatcher } from '../core/webhooks/index.js';

export interface RunningLoop {
  stop(): Promise<void>;
}

/**
 * The webhook dispatcher as a long-running loop of the jobs role (not a cron job: new events
 * should go out within `pollMs`). Several jobs processes may run it: claims in SQLite keep them
 * from sending a message twice.
 */
export function startWebhookDispatch(dispatcher: WebhookDispatcher, pollMs: number): RunningLoop {
  dispatcher.start(pollMs);
  return { stop: () => dispatcher.stop() };
}
