import { hostname } from 'node:os';
import type { MetricsExposition } from '../api/metrics.js';
import type { Logger } from '../core/logger.js';
import { startOpsMetricsShare } from '../jobs/ops-metrics-share.js';
import { opsSnapshotStore, type RedisClient } from '../storage/redis/index.js';
import type { OpsRegistry } from './ops-metrics.js';

// One scrape shows every role. Under systemd the roles run as separate processes and only the api
// process serves /metrics (admin socket, ops_metrics_port): the others put their figures in Redis
// every few seconds and the api process adds them to its own at each scrape. A process that
// stopped drops out once its figures are older than three rounds. Redis gone: the scrape shows
// the api process alone (svc_metrics_peer_processes says how many others it holds).

export const SHARE_INTERVAL_MS = 5_000;
const MAX_AGE_MS = 3 * SHARE_INTERVAL_MS;

const processKey = () => `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;

/** What the api role serves: this process's figures plus the fresh ones the others shared. */
export function opsExposition(ops: OpsRegistry, redis: RedisClient, logger: Logger): MetricsExposition {
  const store = opsSnapshotStore(redis);
  return {
    contentType: ops.contentType,
    async render() {
      const peers = await store.fresh(MAX_AGE_MS, Date.now()).catch((err: unknown) => {
        logger.warn({ err: (err as Error).message }, 'metrics of the other svc processes could not be read: this process\'s only');
        return [];
      });
      return ops.render(peers);
    },
  };
}

/** For a process without the api role: shares its figures until stopped, then withdraws them. */
export function shareOpsMetrics(ops: OpsRegistry, redis: RedisClient, logger: Logger): { stop(): Promise<void> } {
  const store = opsSnapshotStore(redis);
  const key = processKey();
  let failing = false;
  const loop = startOpsMetricsShare({
    intervalMs: SHARE_INTERVAL_MS, logger,
    async publish() {
      try {
        await store.publish(key, await ops.snapshot(), Date.now());
        if (failing) logger.info({ role: ops.role }, 'metrics shared again');
        failing = false;
      } catch (err) {
        if (!failing) logger.warn({ role: ops.role, err: (err as Error).message }, 'metrics could not be shared; retried every round');
        failing = true;
      }
    },
  });
  return {
    async stop() {
      await loop.stop();
      await store.remove(key).catch(() => undefined);
    },
  };
}
