import { takeTokenScript, type RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';

export interface BucketTake {
  allowed: boolean;
  /** Tokens left after this take (fractional). */
  tokens: number;
}

/** Whose bucket: a team's (the API), a client address's (the public routes), or a client address's failed SMTP logins. */
export type BucketKind = 'team' | 'client' | 'smtp-auth';

/** One atomic refill-and-spend of a token bucket (Lua on the Redis server). */
export async function takeFromBucket(
  redis: RedisClient, owner: string, capacity: number, refillPerSecond: number, cost: number, kind: BucketKind = 'team',
): Promise<BucketTake> {
  const key = kind === 'team' ? redisKeys.rateBucket(owner) : kind === 'client' ? redisKeys.clientRateBucket(owner) : redisKeys.smtpAuthFailureBucket(owner);
  const [allowed, tokens] = await takeTokenScript(redis, key, capacity, refillPerSecond, cost);
  return { allowed: allowed === 1, tokens: Number(tokens) };
}
