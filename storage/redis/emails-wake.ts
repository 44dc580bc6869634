import type { RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';

// The push wake-up of the outbound queues: the API publishes "mail is due in region R" after its
// commit; each outbound process subscribes for its regions. Best effort by design — a lost
// message only delays mail until the queue's safety poll, and nothing is lost with Redis.

/** A publisher that sends at most one wake-up per region per event-loop turn. */
export function wakePublisher(redis: RedisClient): (region: string) => void {
  const pending = new Set<string>();
  return (region) => {
    if (pending.has(region)) return;
    pending.add(region);
    setImmediate(() => {
      pending.delete(region);
      redis.publish(redisKeys.outboundWake(region), '1').catch(() => undefined);
    });
  };
}

/** Calls `onWake(region)` for every wake-up of these regions; stop() unsubscribes. */
export async function subscribeWake(redis: RedisClient, regions: readonly string[], onWake: (region: string) => void): Promise<{ stop(): Promise<void> }> {
  const subscriber = redis.duplicate({ enableOfflineQueue: true, lazyConnect: true });
  subscriber.on('error', () => undefined);
  const byChannel = new Map(regions.map((r) => [redisKeys.outboundWake(r), r]));
  subscriber.on('message', (channel: string) => {
    const region = byChannel.get(channel);
    if (region) onWake(region);
  });
  try {
    await subscriber.connect();
    await subscriber.subscribe(...byChannel.keys());
  } catch {
    // Redis away: the safety poll carries the queue until it is back (ioredis resubscribes).
  }
  return { stop: async () => { subscriber.disconnect(); } };
}
