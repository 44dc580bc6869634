import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivateRedis } from '../../storage/redis/index.js';
import { withDeadline } from './deadline.js';
import { freePort } from './ports.js';

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A private redis-server on a free loopback port, for one test file. */
export async function startTestRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      const redis = await startPrivateRedis({ bin: 'redis-server', dir, port });
      return { url: redis.url, port, stop: async () => { await withDeadline('the test redis-server to stop after SIGTERM', redis.stop(), 30_000); rmSync(dir, { recursive: true, force: true }); } };
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}
