import type { RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';

/** Redis side of the delivery DNS cache (dns/cache.ts's DnsCacheStore); rebuilt from DNS when lost. */
export interface RedisDnsCacheStore {
  get(kind: string, name: string): Promise<string | null>;
  set(kind: string, name: string, value: string, ttlSeconds: number): Promise<void>;
}

export function redisDnsCacheStore(redis: RedisClient): RedisDnsCacheStore {
  return {
    get: (kind, name) => redis.get(redisKeys.dnsCache(kind, name)),
    async set(kind, name, value, ttlSeconds) {
      await redis.set(redisKeys.dnsCache(kind, name), value, 'EX', ttlSeconds);
    },
  };
}
