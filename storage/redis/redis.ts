import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';

export type RedisClient = Redis;

export interface RedisOptions {
  /** redis://, rediss:// or unix:///path/to.sock */
  url: string;
  commandTimeoutMs: number;
}

/**
 * A client that fails fast instead of queueing while Redis is away: every command either answers
 * or errors within the timeout, so no request waits on Redis beyond a bounded time.
 */
export async function connectRedis(options: RedisOptions): Promise<RedisClient> {
  const common = {
    lazyConnect: true,
    // Concurrent requests' rate-limit calls leave in one write instead of one each.
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.commandTimeoutMs,
    retryStrategy: (times: number) => Math.min(times * 100, 2000),
  };
  const redis = options.url.startsWith('unix://')
    ? new Redis({ ...common, path: options.url.slice('unix://'.length) })
    : new Redis(options.url, common);
  redis.on('error', () => {
    // Reconnection is automatic; callers see failed commands and readiness reports it.
  });
  await redis.connect();
  return redis;
}

// The rate-limit bucket is read, refilled and spent in one atomic step, on Redis's own clock so
// that every process sharing the bucket agrees on time.
const takeTokenLua = `
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = tonumber(b[1])
local ts = tonumber(b[2])
if tokens == nil or ts == nil then tokens = cap; ts = now end
tokens = math.min(cap, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
if tokens >= cost then tokens = tokens - cost; allowed = 1 end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(cap / rate * 1000) + 1000)
return {allowed, tostring(tokens)}
`;

const takeTokenSha = createHash('sha1').update(takeTokenLua).digest('hex');

/**
 * Runs the bucket script by its digest, loading it once if the server does not know it (a new or
 * flushed Redis). Called straight rather than through ioredis's defineCommand, whose per-call
 * wrapping cost a quarter of the client's work for this one command on every request.
 */
export async function takeTokenScript(redis: RedisClient, key: string, capacity: number, refillPerSecond: number, cost: number): Promise<[number, string]> {
  const args = [String(capacity), String(refillPerSecond), String(cost)];
  try {
    return await redis.evalsha(takeTokenSha, 1, key, ...args) as [number, string];
  } catch (err) {
    if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
    return await redis.eval(takeTokenLua, 1, key, ...args) as [number, string];
  }
}
