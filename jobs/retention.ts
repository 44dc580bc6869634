import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { RetentionWindowsOf } from '../core/retention-windows.js';
import { pruneDroppedReceived } from '../core/retention/index.js';
import { pruneEvents } from '../core/retention/index.js';
import { pruneConsentRecords } from '../core/retention/index.js';
import { sweepOrphanRaw } from '../core/retention/index.js';
import { pruneImportFiles, type ImportFileRetentionDeps } from '../core/retention/index.js';
import type { Db } from '../storage/sql/index.js';
import type { Spool } from '../storage/files/index.js';
import type { Job } from './scheduler.js';

export interface RetentionDeps {
  db: Db;
  spool: Spool;
  clock: Clock;
}

/**
 * Hourly: dropped received records past their team's window (its plan's, else `retentionDays`) go,
 * with their raw files. Kept mail stays.
 */
export function pruneDroppedReceivedJob(deps: RetentionDeps, windowsOf: RetentionWindowsOf, retentionDays: number): Job {
  return {
    name: 'prune-dropped-received',
    schedule: '29 * * * *',
    leaseMs: 10 * 60_000,
    run: async () => ({ ...await pruneDroppedReceived(deps, await windowsOf(retentionDays)) }),
  };
}

/** Hourly: outbox events every consumer has read, no webhook message needs and past the window. */
export function pruneEventsJob(deps: Pick<RetentionDeps, 'db' | 'clock'>, retentionDays: number): Job {
  return {
    name: 'prune-events',
    schedule: '41 * * * *',
    leaseMs: 10 * 60_000,
    run: async () => ({ ...await pruneEvents(deps.db, deps.clock, retentionDays) }),
  };
}

/** Hourly: consent records past their three years (kept after erasure until then). */
export function pruneConsentRecordsJob(deps: Pick<RetentionDeps, 'db' | 'clock'>): Job {
  return {
    name: 'prune-consent-records',
    schedule: '23 * * * *',
    leaseMs: 30 * 60_000,
    run: async () => ({ ...await pruneConsentRecords(deps.db, deps.clock) }),
  };
}

/** How far back the hourly orphan sweep looks: two days, so missed runs lose nothing. */
const RECENT_SWEEP_MS = 2 * 86_400_000;

/** Hourly: raw files no record owns, in the folders of the last two days. */
export function sweepOrphanRawJob(deps: RetentionDeps): Job {
  return {
    name: 'sweep-orphan-raw',
    schedule: '53 * * * *',
    leaseMs: 30 * 60_000,
    run: async () => ({ ...await sweepOrphanRaw(deps, { sinceMs: deps.clock.now().getTime() - RECENT_SWEEP_MS }) }),
  };
}

/**
 * Once when the jobs role starts: every folder (orphans of a crash long ago, before the hourly
 * sweep's window). Runs in the background; `stop()` ends it between folders.
 */
export function startFullOrphanSweep(deps: RetentionDeps, logger: Logger): { done: Promise<void>; stop(): Promise<void> } {
  const abort = new AbortController();
  const started = performance.now();
  const done = sweepOrphanRaw(deps, { signal: abort.signal }).then(
    (result) => logger.info({ job: 'sweep-orphan-raw', full: true, result, ms: Math.round(performance.now() - started) }, 'job finished'),
    (err: unknown) => logger.error({ job: 'sweep-orphan-raw', full: true, err }, 'job failed'),
  );
  return { done, async stop() { abort.abort(); await done; } };
}

/** Hourly: contact import files a week after their import finished, and files no import owns. */
export function pruneImportFilesJob(deps: ImportFileRetentionDeps): Job {
  return {
    name: 'prune-import-files',
    schedule: '11 * * * *',
    leaseMs: 10 * 60_000,
    run: async () => ({ ...await pruneImportFiles(deps) }),
  };
}
