import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/**
 * Resource ids are UUIDv7: time-ordered, so "newest first" is ordering by id and list cursors are
 * plain item ids.
 *
 * uuid's own v7 asks the OS for 16 random bytes per id (a webcrypto call each: 3% of the outbound
 * process, which writes several ids per message). Here the bytes come from a pool refilled 4 KiB
 * at a time and uuid lays out the bits; the clock and sequence are kept as uuid keeps them by
 * default: a new millisecond starts from a random sequence, ids within one millisecond count up.
 */
export const newId = (): string => {
  const random = randomBytes16();
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    sequence = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    sequence = (sequence + 1) | 0;
    if (sequence === 0) lastMs++;
  }
  return uuidv7({ msecs: lastMs, seq: sequence, random });
};

let lastMs = -Infinity;
let sequence = 0;
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomBytes16(): Uint8Array {
  if (used + 16 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const bytes = pool.subarray(used, used + 16);
  used += 16;
  return bytes;
}

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const looksLikeId = (value: string): boolean => uuidShape.test(value);
