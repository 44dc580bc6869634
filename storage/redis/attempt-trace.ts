import type { RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';

// The live trace's way across processes (svc admin trace): an outbound process without the api
// role publishes each attempt's line; the api process subscribes only while someone watches.
// Best effort by design: a trace is a view, never a record (the database keeps each attempt).

/** How long a publisher stays quiet after Redis said nobody listens. */
const QUIET_MS = 1000;

/**
 * A publisher that skips Redis while nobody listens: PUBLISH answers how many received it, and
 * after a 0 the next second's lines are not sent (a watcher that starts sees lines within a second).
 */
export function attemptTracePublisher(redis: RedisClient, nowMs: () => number = Date.now): (line: string) => void {
  let quietUntil = 0;
  return (line) => {
    if (nowMs() < quietUntil) return;
    redis.publish(redisKeys.attemptTrace, line)
      .then((receivers) => { if (receivers === 0) quietUntil = nowMs() + QUIET_MS; })
      .catch(() => { quietUntil = nowMs() + QUIET_MS; });
  };
}

/** Calls `onLine` with every published line until stop(). */
export async function subscribeAttemptTraces(redis: RedisClient, onLine: (line: string) => void): Promise<{ stop(): void }> {
  const subscriber = redis.duplicate({ enableOfflineQueue: true, lazyConnect: true });
  subscriber.on('error', () => undefined);
  subscriber.on('message', (_channel: string, message: string) => onLine(message));
  try {
    await subscriber.connect();
    await subscriber.subscribe(redisKeys.attemptTrace);
  } catch {
    // Redis away: this process's own attempts still reach the trace; ioredis resubscribes.
  }
  return { stop: () => subscriber.disconnect() };
}
