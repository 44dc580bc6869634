import type { RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';

// Push wake-ups across processes: where work is created publishes after its commit, the process
// that does the work subscribes. Best effort by design — a lost message only delays the work
// until its loop's safety poll, and nothing is lost with Redis.
// - the outbound queues: "mail is due in region R", each outbound process for its regions;
// - the durable work runner: "work was added" (runs enrolled by an event, an import queued).

/** Publishes on a channel at most once per event-loop turn, whatever the number of calls. */
function coalescedPublisher(redis: RedisClient): (channel: string) => void {
  const pending = new Set<string>();
  return (channel) => {
    if (pending.has(channel)) return;
    pending.add(channel);
    setImmediate(() => {
      pending.delete(channel);
      redis.publish(channel, '1').catch(() => undefined);
    });
  };
}

/** Calls `onMessage(channel)` for every message on these channels; stop() unsubscribes. */
async function subscribeChannels(redis: RedisClient, channels: readonly string[], onMessage: (channel: string) => void): Promise<{ stop(): Promise<void> }> {
  const subscriber = redis.duplicate({ enableOfflineQueue: true, lazyConnect: true });
  subscriber.on('error', () => undefined);
  const wanted = new Set(channels);
  subscriber.on('message', (channel: string) => { if (wanted.has(channel)) onMessage(channel); });
  try {
    await subscriber.connect();
    await subscriber.subscribe(...channels);
  } catch {
    // Redis away: the safety poll carries the work until it is back (ioredis resubscribes).
  }
  return { stop: async () => { subscriber.disconnect(); } };
}

/** A publisher that sends at most one wake-up per region per event-loop turn. */
export function wakePublisher(redis: RedisClient): (region: string) => void {
  const publish = coalescedPublisher(redis);
  return (region) => publish(redisKeys.outboundWake(region));
}

/** Calls `onWake(region)` for every wake-up of these regions; stop() unsubscribes. */
export function subscribeWake(redis: RedisClient, regions: readonly string[], onWake: (region: string) => void): Promise<{ stop(): Promise<void> }> {
  const byChannel = new Map(regions.map((r) => [redisKeys.outboundWake(r), r]));
  return subscribeChannels(redis, [...byChannel.keys()], (channel) => onWake(byChannel.get(channel)!));
}

/** Tells the work runners of every process that work was added (at most once per event-loop turn). */
export function workWakePublisher(redis: RedisClient): () => void {
  const publish = coalescedPublisher(redis);
  return () => publish(redisKeys.workWake);
}

/** Calls `onWake()` whenever any process added work. */
export function subscribeWorkWake(redis: RedisClient, onWake: () => void): Promise<{ stop(): Promise<void> }> {
  return subscribeChannels(redis, [redisKeys.workWake], onWake);
}
