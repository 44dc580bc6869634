import ipaddr from 'ipaddr.js';
import type { RedisClient } from '../storage/redis/index.js';
import { takeFromBucket, type BucketKind } from '../storage/redis/index.js';
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
 * A token bucket per team (the API) or per client address (the public routes). When Redis cannot
 * answer, requests are let through (the bucket is a fairness tool, not a safety one) and readiness
 * reports Redis as failed.
 */
export function rateLimiter(redis: RedisClient, settings: RateLimitSettings, logger: Logger, kind: BucketKind = 'team') {
  const { capacity, refillPerSecond } = settings;
  let lastWarning = 0;
  /** Spends `cost` tokens of `owner`'s bucket; a cost of 0 only looks (the bucket as it is now). */
  async function take(owner: string, cost = 1): Promise<RateDecision> {
    try {
      const { allowed, tokens } = await takeFromBucket(redis, owner, capacity, refillPerSecond, cost, kind);
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
        logger.warn({ err: String(err), bucket: kind }, 'rate limit unavailable, letting requests through');
      }
      return untouched();
    }
  }
  /** What an answer that spent nothing says: a full bucket (a request no team is charged for). */
  const untouched = (): RateDecision => ({ allowed: true, limit: capacity, remaining: capacity, resetSeconds: 0, retryAfterSeconds: 1 });
  return Object.assign(take, { untouched });
}

export type RateLimiter = ReturnType<typeof rateLimiter>;

/**
 * The bucket a client address spends from. An IPv4 address (also written IPv4-mapped) is its own
 * bucket; IPv6 addresses share one per /64, the smallest block a host is usually given, so that
 * walking through one's own /64 buys no fresh tokens. Anything else (no address) shares one.
 */
export function clientBucket(address: string | undefined): string {
  if (!address || !ipaddr.isValid(address)) return 'unknown';
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
