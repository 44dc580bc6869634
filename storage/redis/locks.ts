import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';

/** A lease on a job name: only one instance runs a scheduled job at a time. */
export async function tryJobLock(redis: RedisClient, job: string, ttlMs: number): Promise<(() => Promise<void>) | undefined> {
  const key = redisKeys.jobLock(job);
  const token = randomUUID();
  const got = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (got !== 'OK') return undefined;
  return async () => {
    // Release only our own lease (it may have expired and been taken by another instance).
    await redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", 1, key, token);
  };
}

/**
 * Marks one cron tick of a job as taken (its scheduled time, to the second); false when another
 * instance took it. The mark outlives the run, so an instance whose tick fires later still skips it.
 */
export async function tryJobRun(redis: RedisClient, job: string, tick: Date, ttlMs: number): Promise<boolean> {
  const second = new Date(Math.floor(tick.getTime() / 1000) * 1000).toISOString();
  return (await redis.set(redisKeys.jobRun(job, second), '1', 'PX', ttlMs, 'NX')) === 'OK';
}
