import { takeTokenScript, type RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';

export interface BucketTake {
  allowed: boolean;
  /** Tokens left after this take (fractional). */
  tokens: number;
}

/** One atomic refill-and-spend of a team's token bucket (Lua on the Redis server). */
export async function takeFromBucket(redis: RedisClient, teamId: string, capacity: number, refillPerSecond: number, cost: number): Promise<BucketTake> {
  const [allowed, tokens] = await takeTokenScript(redis, redisKeys.rateBucket(teamId), capacity, refillPerSecond, cost);
  return { allowed: allowed === 1, tokens: Number(tokens) };
}
