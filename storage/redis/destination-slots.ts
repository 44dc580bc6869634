import { createHash } from 'node:crypto';
import type { RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';

// Per-destination connection slots shared by every outbound process of a region: one sorted set
// per (region, recipient domain) whose members are the deliveries holding a slot, each scored
// with the time its slot lapses. A slot is taken only while fewer than the limit are live, lapsed
// ones are dropped first, and the holder renews its slots while it delivers — so a process killed
// with its slots taken gives them back by itself after the TTL. Times are the Redis server's own
// (TIME), so the processes' clocks do not have to agree.

/** One delivery asking for (or holding) a slot at its destination. */
export interface SlotRequest {
  region: string;
  domain: string;
  /** Who holds the slot: the process's node id and the recipient. */
  holder: string;
}

const acquireLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local granted = {}
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZSCORE', key, ARGV[2 + i]) or redis.call('ZCARD', key) < limit then
    redis.call('ZADD', key, now + ttl, ARGV[2 + i])
    redis.call('PEXPIRE', key, ttl)
    granted[i] = 1
  else
    granted[i] = 0
  end
end
return granted`;

const renewLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', now + ttl, ARGV[1 + i])
  redis.call('PEXPIRE', key, ttl)
end
return #KEYS`;

const sha = (lua: string) => createHash('sha1').update(lua).digest('hex');
const scripts = { acquire: { lua: acquireLua, sha: sha(acquireLua) }, renew: { lua: renewLua, sha: sha(renewLua) } };

async function runScript(redis: RedisClient, script: { lua: string; sha: string }, keys: string[], args: string[]): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
    return await redis.eval(script.lua, keys.length, ...keys, ...args);
  }
}

export interface DestinationSlots {
  /** Takes a slot for each request while its destination has fewer than `limit` live; answers which were granted. */
  acquire(requests: readonly SlotRequest[], limit: number, ttlMs: number): Promise<boolean[]>;
  /** Extends the slots still held. */
  renew(held: readonly SlotRequest[], ttlMs: number): Promise<void>;
  release(slot: SlotRequest): Promise<void>;
  /** Drops every slot of the region these node ids hold (processes known dead): their successor need not wait for the lapse. */
  releaseNodes(region: string, nodes: readonly string[]): Promise<number>;
}

export function destinationSlots(redis: RedisClient): DestinationSlots {
  const key = (r: SlotRequest) => redisKeys.destinationSlots(r.region, r.domain.toLowerCase());
  return {
    async acquire(requests, limit, ttlMs) {
      if (requests.length === 0) return [];
      const args = [String(ttlMs), String(limit), ...requests.map((r) => r.holder)];
      const granted = await runScript(redis, scripts.acquire, requests.map(key), args) as number[];
      return granted.map((g) => g === 1);
    },
    async renew(held, ttlMs) {
      for (let i = 0; i < held.length; i += 200) {
        const chunk = held.slice(i, i + 200);
        await runScript(redis, scripts.renew, chunk.map(key), [String(ttlMs), ...chunk.map((r) => r.holder)]);
      }
    },
    async release(slot) {
      await redis.zrem(key(slot), slot.holder);
    },
    async releaseNodes(region, nodes) {
      if (nodes.length === 0) return 0;
      let removed = 0;
      const pattern = `${redisKeys.destinationSlots(region, '')}*`;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', '200');
        cursor = next;
        for (const k of keys) {
          const theirs = (await redis.zrange(k, '0', '-1')).filter((m) => nodes.some((n) => m.startsWith(`${n}|`)));
          if (theirs.length) removed += await redis.zrem(k, ...theirs);
        }
      } while (cursor !== '0');
      return removed;
    },
  };
}
