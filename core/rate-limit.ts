import type { RedisClient } from '../storage/redis.js';
import { takeFromBucket } from '../storage/rate-bucket.js';
import type { Logger } from './logger.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Whole seconds to wait, never 0; only meaningful when refused. */
  retryAfterSeconds: number;
}

export interface RateLimitSettings {
  capacity: number;
  refillPerSecond: number;
}

/**
 * The team's token bucket. When Redis cannot answer, requests are let through (the bucket is a
 * fairness tool, not a safety one) and readiness reports Redis as failed.
 */
export function rateLimiter(redis: RedisClient, settings: RateLimitSettings, logger: Logger) {
  const { capacity, refillPerSecond } = settings;
  let lastWarning = 0;
  return async function take(teamId: string, cost = 1): Promise<RateDecision> {
    try {
      const { allowed, tokens } = await takeFromBucket(redis, teamId, capacity, refillPerSecond, cost);
      return {
        allowed,
        limit: capacity,
        remaining: Math.max(0, Math.floor(tokens)),
        resetSeconds: Math.ceil((capacity - tokens) / refillPerSecond),
        retryAfterSeconds: Math.max(1, Math.ceil((cost - tokens) / refillPerSecond)),
      };
    } catch (err) {
      if (Date.now() - lastWarning > 10_000) {
        lastWarning = Date.now();
        logger.warn({ err: String(err) }, 'rate limit unavailable, letting requests through');
      }
      return { allowed: true, limit: capacity, remaining: capacity, resetSeconds: 0, retryAfterSeconds: 1 };
    }
  };
}

export type RateLimiter = ReturnType<typeof rateLimiter>;
