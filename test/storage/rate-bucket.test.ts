import t from 'tap';
import { startTestRedis } from '../helpers/redis.js';
import { connectRedis } from '../../storage/redis/index.js';
import { takeFromBucket } from '../../storage/redis/index.js';

// The bucket script is run by its digest; a Redis that does not know it (new, restarted, or
// after SCRIPT FLUSH) must still answer, loading it on the way.
const server = await startTestRedis();
const redis = await connectRedis({ url: server.url, commandTimeoutMs: 2000 });
t.teardown(async () => {
  redis.disconnect();
  await server.stop();
});

t.test('a fresh Redis loads the script on first use and spends tokens atomically', async (t) => {
  const takes = await Promise.all(Array.from({ length: 12 }, () => takeFromBucket(redis, 'team-a', 10, 0.001, 1)));
  t.equal(takes.filter((x) => x.allowed).length, 10, 'ten of twelve concurrent takes fit a bucket of 10');
  t.ok(takes.filter((x) => !x.allowed).every((x) => x.tokens < 1), 'the refused ones saw it empty');
});

t.test('after SCRIPT FLUSH the bucket still answers and keeps its state', async (t) => {
  await redis.script('FLUSH');
  const after = await takeFromBucket(redis, 'team-a', 10, 0.001, 1);
  t.equal(after.allowed, false, 'team-a is still empty');
  const other = await takeFromBucket(redis, 'team-b', 10, 0.001, 1);
  t.equal(other.allowed, true);
  t.ok(Math.abs(other.tokens - 9) < 0.01, `nine left (${other.tokens})`);
});
