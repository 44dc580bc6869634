import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../../storage/sql/index.js';
import type { SecretBox } from '../../storage/files/index.js';
import { webhooksRepo, type WebhookDeliveryRow } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { noOpsMetrics, type OpsMetrics } from '../ops-metrics.js';
import { deliverClaimed, type DeliverDeps } from './deliver.js';
import { fanOut } from './fan-out.js';
import { attemptRecorder } from './recorder.js';
import type { Sender } from './ports.js';
import { wakeSignal, type WakeSignal } from '../wake.js';

export interface DispatcherOptions {
  /** Requests in flight to one endpoint at most; others' messages never wait behind it. */
  concurrencyPerEndpoint: number;
  /** Longest one request may take; a claim lasts this plus a margin. */
  timeoutMs: number;
}

export interface DispatcherDeps {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  sender: Sender;
  logger: Logger;
  options: DispatcherOptions;
  /** Counts attempts for the operator's /metrics (none counted when absent). */
  metrics?: OpsMetrics;
}

export interface RunSummary {
  fannedOut: number;
  attempted: number;
}

export interface WebhookDispatcher {
  /** Fans out new events and makes every attempt due now, waiting for them (tests, admin). */
  runDue(): Promise<RunSummary>;
  /**
   * One pass for the jobs role's loop: fans out new events and claims what is due into free
   * slots; deliveries go on in the background. True when it claimed or fanned out anything.
   */
  tick(): Promise<boolean>;
  /** Asks the loop, where one runs in this process, to look now (a replay was queued). */
  readonly wakes: WakeSignal;
  /** Claims nothing more, waits for requests in flight, closes connections. */
  stop(): Promise<void>;
}

/**
 * Delivers outbox events to webhook endpoints. SQLite holds every message and its claim, so a
 * restart or a lost Redis neither loses a message nor sends one twice; a claim whose process died
 * is taken again when its lease runs out (the receiver then sees the same `wh-id` again).
 */
export function webhookDispatcher(deps: DispatcherDeps): WebhookDispatcher {
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const leaseMs = deps.options.timeoutMs + 30_000;
  const deliverDeps: DeliverDeps = {
    db: deps.db, clock: deps.clock, secretBox: deps.secretBox, sender: deps.sender, logger: deps.logger, owner, recorder: attemptRecorder(deps.db, owner, leaseMs),
    metrics: deps.metrics ?? noOpsMetrics,
  };
  const repo = webhooksRepo(deps.db);
  const inFlight = new Map<string, number>();
  const running = new Set<Promise<unknown>>();
  const wakes = wakeSignal();
  let stopped = false;

  /** Claims what one endpoint has due, up to its free slots, and starts sending it. */
  async function fill(endpointId: string): Promise<number> {
    const free = deps.options.concurrencyPerEndpoint - (inFlight.get(endpointId) ?? 0);
    if (free <= 0) return 0;
    const now = deps.clock.now();
    // Counted before the claim resolves, so two fills of one endpoint never exceed its slots.
    inFlight.set(endpointId, (inFlight.get(endpointId) ?? 0) + free);
    let claimed: WebhookDeliveryRow[] = [];
    try {
      claimed = await repo.claim(endpointId, now.toISOString(), owner, new Date(now.getTime() + leaseMs).toISOString(), free);
    } finally {
      release(endpointId, free - claimed.length);
    }
    claimed.forEach(launch);
    return claimed.length;
  }

  function release(endpointId: string, slots: number): void {
    const left = (inFlight.get(endpointId) ?? 0) - slots;
    if (left > 0) inFlight.set(endpointId, left);
    else inFlight.delete(endpointId);
  }

  async function fillAll(): Promise<number> {
    let claimed = 0;
    for (const endpointId of await repo.dueEndpointIds(deps.clock.now().toISOString(), 100_000)) claimed += await fill(endpointId);
    return claimed;
  }

  /** Sends a claimed message in a slot already counted; the slot passes to the next due message. */
  function launch(message: WebhookDeliveryRow): void {
    const done = deliverClaimed(deliverDeps, message, !stopped)
      .catch((err: unknown) => {
        deps.logger.error({ err, messageId: message.id }, 'webhook delivery crashed; the claim expires and it is retried');
        return [];
      })
      .then((next) => {
        running.delete(done);
        if (next.length === 0) release(message.endpoint_id, 1);
        next.forEach(launch);
      });
    running.add(done);
  }


  return {
    async runDue() {
      const fannedOut = await fanOut(deps.db, deps.clock);
      let attempted = 0;
      for (;;) {
        const claimed = await fillAll();
        attempted += claimed;
        if (claimed === 0 && running.size === 0) break;
        if (claimed === 0) await Promise.race(running);
      }
      return { fannedOut, attempted };
    },
    async tick() {
      if (stopped) return false;
      const fannedOut = await fanOut(deps.db, deps.clock);
      return (await fillAll()) + fannedOut > 0;
    },
    wakes,
    async stop() {
      if (stopped) return;
      stopped = true;
      while (running.size > 0) await Promise.allSettled([...running]);
      await deps.sender.close();
      deps.logger.info({ owner }, 'webhook dispatcher stopped');
    },
  };
}
