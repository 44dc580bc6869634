import t from 'tap';
import { pino } from 'pino';
import { startScheduler, type Job } from '../../jobs/scheduler.js';
import { connectRedis, tryJobRun } from '../../storage/redis/index.js';
import { waitFor } from '../helpers/deadline.js';
import { startTestRedis } from '../helpers/redis.js';

// Cron jobs with several jobs processes (one per node): the Redis lock keeps two runs from
// overlapping, and the mark of each cron tick keeps a process whose tick fires after another's
// run finished (its clock a little behind) from running that tick again.
const redisServer = await startTestRedis();
const first = await connectRedis({ url: redisServer.url, commandTimeoutMs: 2000 });
const second = await connectRedis({ url: redisServer.url, commandTimeoutMs: 2000 });
t.teardown(async () => { first.disconnect(); second.disconnect(); await redisServer.stop(); });

t.test('a cron tick is taken once, whoever comes later', async (t) => {
  const tick = new Date('2026-11-25T10:00:00.250Z');
  t.equal(await tryJobRun(first, 'sweep', tick, 60_000), true, 'the first process runs it');
  t.equal(await tryJobRun(second, 'sweep', new Date('2026-11-25T10:00:00.900Z'), 60_000), false, 'the same second from another process: skipped');
  t.equal(await tryJobRun(second, 'sweep', new Date('2026-11-25T10:01:00.000Z'), 60_000), true, 'the next tick is free');
  t.equal(await tryJobRun(second, 'other', tick, 60_000), true, 'ticks are per job');
});

t.test('two schedulers with the same every-second job run each tick once between them', async (t) => {
  const runs: string[] = [];
  const job = (): Job => ({ name: `tick-${process.pid}`, schedule: '* * * * * *', leaseMs: 5000, run: async () => { runs.push(new Date().toISOString().slice(0, 19)); } });
  const logger = pino({ level: 'silent' });
  const schedulers = [startScheduler([job()], first, logger), startScheduler([job()], second, logger)];
  await waitFor('five ticks run', async () => runs.length >= 5, 15_000, 50);
  for (const s of schedulers) await s.stop();
  t.equal(new Set(runs).size, runs.length, `no tick ran twice (${runs.join(', ')})`);
});
