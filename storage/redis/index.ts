// storage/redis: Redis: the client, every key name, the rate-bucket script, job locks, the DNS cache store, the
// outbound and work wake-up channels and destination slots, the attempt trace channel, and the private redis-server runner.
// Other rooms import this kind from here alone.
export * from './attempt-trace.js';
export * from './destination-slots.js';
export * from './dns-cache.js';
export * from './emails-wake.js';
export * from './locks.js';
export * from './ops-snapshots.js';
export * from './rate-bucket.js';
export * from './redis-keys.js';
export * from './redis-process.js';
export * from './redis.js';
