import t from 'tap';
import { fixedWindow } from '../../core/retention-windows.js';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestAppliance } from '../helpers/appliance.js';
import { withDeadline } from '../helpers/deadline.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { pruneRequestLogs } from '../../core/request-logs/retention.js';
import { pruneRequestLogsJob } from '../../jobs/prune-request-logs.js';
import { startScheduler, type Job } from '../../jobs/scheduler.js';
import { redisKeys } from '../../storage/redis/index.js';
import type { RequestLogRow } from '../../storage/sql/index.js';

const DAY = 86_400_000;

/** A clock the test moves by hand. */
class ManualClock implements Clock {
  constructor(private ms: number) {}
  now() { return new Date(this.ms); }
  advance(ms: number) { this.ms += ms; }
}

/** A logger that keeps every line, to read what the scheduler reported. */
function recordingLogger(): Logger & { lines: { level: string; obj: Record<string, unknown>; msg?: string }[] } {
  const lines: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const at = (level: string) => (obj: object, msg?: string) => { lines.push({ level, obj: obj as Record<string, unknown>, msg }); };
  const logger = { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), child: () => logger };
  return logger;
}

const clock = new ManualClock(Date.parse('2025-06-15T12:00:00.000Z'));
const app = await startTestAppliance({ clock, roles: [] });
t.teardown(() => app.stop());
const { requestLogs } = app.appliance.services.repos;
const { redis } = app.appliance.services;
const sqlite = app.appliance.services.database.sqlite;

const teamId = randomUUID();
function logRow(ageMs: number, path: string): RequestLogRow {
  return {
    id: randomUUID(), team_id: teamId, api_key_id: null, created_at: new Date(clock.now().getTime() - ageMs).toISOString(),
    method: 'GET', endpoint: '/api-keys', path, response_status: 200, user_agent: 'svc-tests/1.0', source: 'api',
    request_id: randomUUID(), latency_ms: 3, email_id: null, request_body: null, response_body: null,
  };
}
const paths = () => (sqlite.prepare('select path from request_logs order by path').all() as { path: string }[]).map((r) => r.path);
const count = () => (sqlite.prepare('select count(*) as n from request_logs').get() as { n: number }).n;

t.beforeEach(() => { sqlite.prepare('delete from request_logs').run(); });

t.test('the job deletes logs older than the retention window and keeps the recent ones', async (t) => {
  await requestLogs.insertMany([
    logRow(40 * DAY, '/old-1'),
    logRow(40 * DAY, '/old-2'),
    logRow(30 * DAY + 60_000, '/just-past-30-days'),
    logRow(30 * DAY - 60_000, '/just-inside-30-days'),
    logRow(1 * DAY, '/recent-1'),
    logRow(1 * DAY, '/recent-2'),
  ]);
  t.equal(count(), 6);
  const logger = recordingLogger();
  const scheduler = startScheduler([pruneRequestLogsJob(requestLogs, clock, async (days) => fixedWindow(days), 30)], redis, logger);
  t.teardown(() => scheduler.stop());

  t.equal(await scheduler.runNow('prune-request-logs'), true, 'the job ran');
  t.same(paths(), ['/just-inside-30-days', '/recent-1', '/recent-2'], 'the 40-day-old logs are gone; the recent ones stay');
  t.match(logger.lines, [{ level: 'info', obj: { job: 'prune-request-logs', result: 3 }, msg: 'job finished' }], 'it logs how many it deleted');

  // The clock decides what "old" means: 29 days later the 1-day-old logs are past 30 days too.
  clock.advance(29 * DAY + 60_000);
  t.equal(await scheduler.runNow('prune-request-logs'), true);
  t.same(paths(), [], 'after moving the clock, the rest are past the window and deleted');
  await t.rejects(scheduler.runNow('no-such-job'), /no job named no-such-job/);
});

t.test('pruneRequestLogs deletes in batches until none is left, and returns the count', async (t) => {
  const rows = Array.from({ length: 2345 }, (_, i) => logRow(40 * DAY + i * 1000, `/old-${String(i).padStart(5, '0')}`));
  rows.push(logRow(DAY, '/recent'));
  await requestLogs.insertMany(rows);
  t.equal(count(), 2346);
  t.equal(await pruneRequestLogs(requestLogs, clock, fixedWindow(30)), 2345, 'every old row, across three batches');
  t.same(paths(), ['/recent']);
  t.equal(await pruneRequestLogs(requestLogs, clock, fixedWindow(30)), 0, 'nothing left to delete');
  t.equal(await pruneRequestLogs(requestLogs, clock, fixedWindow(1)), 0, 'a row exactly 1 day old is not past a 1-day window (the cutoff is strict)');
  clock.advance(1000);
  t.equal(await pruneRequestLogs(requestLogs, clock, fixedWindow(1)), 1, 'one second later it is');
});

t.test('the Redis lock keeps a job from running twice at once', async (t) => {
  let runs = 0;
  let active = 0;
  let maxActive = 0;
  let finish!: () => void;
  const gate = new Promise<void>((resolve) => { finish = resolve; });
  let started!: () => void;
  const isRunning = new Promise<void>((resolve) => { started = resolve; });
  const slow: Job = {
    name: `slow-${randomUUID()}`,
    schedule: '0 0 1 1 *',
    leaseMs: 60_000,
    async run() {
      runs++;
      started();
      active++;
      maxActive = Math.max(maxActive, active);
      await gate;
      active--;
      return 'done';
    },
  };
  const logger = recordingLogger();
  // Two instances (as two svc processes would be) sharing one Redis.
  const one = startScheduler([slow], redis, logger);
  const two = startScheduler([slow], redis, logger);
  t.teardown(async () => { finish(); await one.stop(); await two.stop(); });

  const first = one.runNow(slow.name);
  const sameInstance = one.runNow(slow.name);
  await withDeadline('the slow job to start', isRunning);
  t.equal(await sameInstance, false, 'a second runNow on the same instance, issued at the same moment, loses');
  t.equal(runs, 1, 'the job started once');
  t.ok(await redis.get(redisKeys.jobLock(slow.name)), 'the lock is held in Redis while it runs');
  const ttl = await redis.pttl(redisKeys.jobLock(slow.name));
  t.ok(ttl > 0 && ttl <= 60_000, `the lock has the job's lease as its expiry (${ttl} ms)`);
  t.equal(await two.runNow(slow.name), false, 'another instance loses too');
  finish();
  t.equal(await withDeadline('the released job to finish', first), true, 'the winner reports it ran');
  t.equal(runs, 1, 'the job ran exactly once');
  t.equal(maxActive, 1);
  t.equal(await redis.get(redisKeys.jobLock(slow.name)), null, 'the lock is released when the job ends');
  t.equal(await two.runNow(slow.name), true, 'once released, the next run takes it');
  t.equal(runs, 2);
});

t.test('two concurrent runNow of the prune job: one wins, the other returns false and deletes nothing twice', async (t) => {
  await requestLogs.insertMany([logRow(40 * DAY, '/old'), logRow(DAY, '/recent')]);
  const job = pruneRequestLogsJob(requestLogs, clock, async (days) => fixedWindow(days), 30);
  let runs = 0;
  const counted: Job = { ...job, run: async () => { runs++; return job.run(); } };
  const logger = recordingLogger();
  const scheduler = startScheduler([counted], redis, logger);
  t.teardown(() => scheduler.stop());
  const results = await Promise.all([scheduler.runNow(job.name), scheduler.runNow(job.name)]);
  t.same(results.sort(), [false, true], 'exactly one of the two ran');
  t.equal(runs, 1);
  t.same(paths(), ['/recent']);
  t.equal(logger.lines.filter((l) => l.msg === 'job finished').length, 1);
});

t.test('a lock held elsewhere blocks the job until its lease expires', async (t) => {
  await requestLogs.insertMany([logRow(40 * DAY, '/old')]);
  const scheduler = startScheduler([pruneRequestLogsJob(requestLogs, clock, async (days) => fixedWindow(days), 30)], redis, recordingLogger());
  t.teardown(() => scheduler.stop());
  await redis.set(redisKeys.jobLock('prune-request-logs'), 'another-instance', 'PX', 300);
  t.equal(await scheduler.runNow('prune-request-logs'), false, 'blocked by the other instance');
  t.same(paths(), ['/old'], 'nothing was deleted');
  await sleep(400);
  t.equal(await scheduler.runNow('prune-request-logs'), true, 'after the lease expires the job runs');
  t.same(paths(), []);
});

t.test('a failing job is logged, releases its lock, and still counts as run', async (t) => {
  const logger = recordingLogger();
  const failing: Job = { name: `fail-${randomUUID()}`, schedule: '0 0 1 1 *', leaseMs: 60_000, run: async () => { throw new Error('disk full'); } };
  const scheduler = startScheduler([failing], redis, logger);
  t.teardown(() => scheduler.stop());
  t.equal(await scheduler.runNow(failing.name), true);
  t.match(logger.lines, [{ level: 'error', obj: { job: failing.name, err: { message: 'disk full' } }, msg: 'job failed' }]);
  t.equal(await redis.get(redisKeys.jobLock(failing.name)), null, 'the lock is released after a failure');
  t.equal(await scheduler.runNow(failing.name), true, 'and the job can run again');
});
