import { createHash } from 'node:crypto';
import type { Db } from '../storage/sql/index.js';
import { idempotencyRepo, isUniqueViolation } from '../storage/repos/index.js';
import type { RedisClient } from '../storage/redis/index.js';
import { redisKeys } from '../storage/redis/index.js';
import type { Clock } from './clock.js';
import { ServiceError } from './errors.js';

// Idempotency-Key (spec, Send request fields): 1-256 characters; within 24 hours a repeat with the
// same request gets the original answer; the same key with another request is 409
// invalid_idempotent_request; the same key while the first is still running is 409
// concurrent_idempotent_requests. The in-flight marker lives in Redis (it can be lost); the
// answer is written to SQLite in the same transaction as the emails, so a Redis flush never makes
// a replay send twice — the primary key on (team, key) is the last line of defence.

export const replayWindowMs = 24 * 3600_000;
const inFlightTtlMs = 120_000;

export interface IdempotencyDeps {
  db: Db;
  redis: RedisClient;
  clock: Clock;
}

export interface Answer<T> {
  status: number;
  body: T;
  replayed: boolean;
}

/** Writes the answer under the key; call inside the transaction that commits the work. */
export type Remember = (trx: Db, status: number, body: unknown) => Promise<void>;

/** The digest two requests are compared by: method-independent, path plus canonical body. */
export function requestDigest(path: string, body: unknown): string {
  return createHash('sha256').update(path).update('\0').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function checkKey(key: string | undefined): void {
  if (key === undefined) return;
  if (key.length < 1 || key.length > 256) {
    throw new ServiceError(400, 'invalid_idempotency_key', 'The `Idempotency-Key` header must be 1-256 characters.');
  }
}

/**
 * Runs `work` at most once per (team, key) within the window; repeats get the stored answer.
 * The request's digest is asked for only when there is a key: canonicalising a body (a batch of
 * 100 emails is 400 KB of JSON) is CPU a send without a key does not spend.
 */
export async function runIdempotent<T>(
  deps: IdempotencyDeps, teamId: string, key: string | undefined, digestOf: () => string, work: (remember: Remember) => Promise<T>,
): Promise<Answer<T>> {
  if (key === undefined) return { status: 200, body: await work(async () => undefined), replayed: false };
  checkKey(key);
  const digest = digestOf();
  const stored = await answered<T>(deps, teamId, key, digest);
  if (stored) return stored;
  const marker = redisKeys.idempotencyInFlight(teamId, createHash('sha256').update(key).digest('hex'));
  const taken = await deps.redis.set(marker, digest, 'PX', inFlightTtlMs, 'NX').catch(() => 'unavailable' as const);
  if (taken === null) throw concurrent();
  try {
    const body = await work(async (trx, status, answer) => {
      const now = deps.clock.now();
      await idempotencyRepo(trx).insert({
        team_id: teamId, key, request_hash: digest, response_status: status, response_body: JSON.stringify(answer),
        created_at: now.toISOString(), expires_at: new Date(now.getTime() + replayWindowMs).toISOString(),
      });
    });
    return { status: 200, body, replayed: false };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // Another request with this key committed first (Redis was away or its marker expired).
    const winner = await answered<T>(deps, teamId, key, digest);
    if (winner) return winner;
    throw concurrent();
  } finally {
    if (taken === 'OK') await deps.redis.del(marker).catch(() => undefined);
  }
}

async function answered<T>(deps: IdempotencyDeps, teamId: string, key: string, digest: string): Promise<Answer<T> | undefined> {
  const row = await idempotencyRepo(deps.db).find(teamId, key, deps.clock.now().toISOString());
  if (!row) return undefined;
  if (row.request_hash !== digest) {
    throw new ServiceError(409, 'invalid_idempotent_request', 'This `Idempotency-Key` was already used with a different request in the last 24 hours.');
  }
  return { status: row.response_status, body: JSON.parse(row.response_body) as T, replayed: true };
}

const concurrent = () => new ServiceError(409, 'concurrent_idempotent_requests', 'A request with this `Idempotency-Key` is still being processed; retry once it has finished.');

/** Deletes answers past the replay window. */
export const pruneIdempotencyKeys = (db: Db, clock: Clock) => idempotencyRepo(db).prune(clock.now().toISOString());
