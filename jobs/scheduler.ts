import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../core/logger.js';
import type { RedisClient } from '../storage/redis/index.js';
import { tryJobLock, tryJobRun } from '../storage/redis/index.js';

export interface Job {
  name: string;
  /** node-cron expression. */
  schedule: string;
  /** Longest a run may hold the lock. */
  leaseMs: number;
  /** What it did, logged as `result` on the run's one line (a count, or counts by name). */
  run(): Promise<string | number | void | Readonly<Record<string, number>>>;
}

export interface Scheduler {
  /** Runs one job now, under its lock (used by tests and `svc admin`). */
  runNow(name: string): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Each job on its cron schedule; a Redis lock keeps two instances from running it at once, and a
 * mark per cron tick keeps a second jobs process (another node, its clock a little behind) from
 * running the same tick again after the first finished.
 */
export function startScheduler(jobs: readonly Job[], redis: RedisClient, logger: Logger): Scheduler {
  const running = new Set<Promise<unknown>>();
  const runLocked = async (job: Job, tick?: Date): Promise<boolean> => {
    if (tick && !(await tryJobRun(redis, job.name, tick, Math.max(job.leaseMs, 10 * 60_000)).catch(() => false))) return false;
    const release = await tryJobLock(redis, job.name, job.leaseMs).catch(() => undefined);
    if (!release) return false;
    const started = performance.now();
    try {
      const result = await job.run();
      logger.info({ job: job.name, result, ms: Math.round(performance.now() - started) }, 'job finished');
    } catch (err) {
      logger.error({ job: job.name, err }, 'job failed');
    } finally {
      await release().catch(() => undefined);
    }
    return true;
  };
  const track = (job: Job, tick?: Date) => {
    const p = runLocked(job, tick);
    running.add(p);
    void p.finally(() => running.delete(p));
    return p;
  };
  const tasks: ScheduledTask[] = jobs.map((job) => cron.schedule(job.schedule, (context) => void track(job, context.date), { name: job.name }));
  return {
    async runNow(name) {
      const job = jobs.find((j) => j.name === name);
      if (!job) throw new Error(`no job named ${name}`);
      return track(job);
    },
    async stop() {
      for (const task of tasks) await task.stop();
      await Promise.allSettled([...running]);
    },
  };
}
