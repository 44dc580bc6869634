import type { RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';

// The operator's /metrics of the processes that do not serve it. Under systemd each role is its own
// process; each one without the api role writes its registry's figures here every few seconds, and
// the api process adds them to its own when scraped. One hash, a field per process; a field not
// refreshed within the age limit is a stopped process and is removed by the next reader.

export interface OpsSnapshotStore {
  publish(processKey: string, metricsJson: string, atMs: number): Promise<void>;
  /** Every fresh snapshot (the JSON each process published); stale ones are deleted. */
  fresh(maxAgeMs: number, nowMs: number): Promise<string[]>;
  remove(processKey: string): Promise<void>;
}

export function opsSnapshotStore(redis: RedisClient): OpsSnapshotStore {
  const key = redisKeys.opsMetricsSnapshots;
  return {
    async publish(processKey, metricsJson, atMs) {
      await redis.hset(key, processKey, JSON.stringify({ at: atMs, metrics: metricsJson }));
    },
    async fresh(maxAgeMs, nowMs) {
      const all = await redis.hgetall(key);
      const fresh: string[] = [];
      const stale: string[] = [];
      for (const [field, value] of Object.entries(all)) {
        const snapshot = JSON.parse(value) as { at: number; metrics: string };
        if (nowMs - snapshot.at <= maxAgeMs) fresh.push(snapshot.metrics);
        else stale.push(field);
      }
      if (stale.length) await redis.hdel(key, ...stale);
      return fresh;
    },
    async remove(processKey) {
      await redis.hdel(key, processKey);
    },
  };
}
