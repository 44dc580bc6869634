import type { Db } from '../../storage/sql/index.js';
import { automationsRepo, workRepo, type AutomationRunRow, type RunStatus } from '../../storage/repos/index.js';
import type { Logger } from '../logger.js';
import { emitListenedEvent } from '../outbox/index.js';
import { graphOf, type Connection, type Graph, type Step } from './graph.js';

// A run's state changes, each inside the caller's transaction with its webhook event
// (automation.run.started | completed | failed, written when an endpoint of the team subscribes;
// a cancel has none), and the versions' graphs.

export const RUN_WORK_KIND = 'automation_run';

export interface RunPayload {
  run_id: string;
}

export function runEventData(run: AutomationRunRow, status: RunStatus, at: string, error?: unknown): Record<string, unknown> {
  return {
    id: run.id, object: 'automation_run', automation_id: run.automation_id, contact_id: run.contact_id, event_name: run.event_name, status,
    created_at: run.created_at, started_at: run.started_at ?? at, completed_at: status === 'running' ? null : at, ...(error ? { error } : {}),
  };
}

export async function startRun(trx: Db, run: AutomationRunRow, now: Date): Promise<void> {
  const at = now.toISOString();
  await automationsRepo(trx).setRun(run.id, { started_at: at });
  await emitListenedEvent(trx, run.team_id, 'automation.run.started', () => runEventData({ ...run, started_at: at }, 'running', at), now);
}

/** Completed or failed; answers false when the run was no longer running (cancelled meanwhile). */
export async function finishRun(trx: Db, run: AutomationRunRow, outcome: 'completed' | 'failed', now: Date, error?: Record<string, unknown>): Promise<boolean> {
  const at = now.toISOString();
  const moved = await automationsRepo(trx).finishRun(run.id, { status: outcome, completed_at: at, error: error ? JSON.stringify(error) : null });
  if (!moved) return false;
  const type = outcome === 'completed' ? 'automation.run.completed' : 'automation.run.failed';
  await emitListenedEvent(trx, run.team_id, type, () => runEventData(run, outcome, at, error), now);
  return true;
}

/** Cancels running runs and stops their work items (an owner mid-step loses its lease). */
export async function cancelRuns(trx: Db, runIds: readonly string[], now: Date, reason: string, logger: Logger): Promise<number> {
  const at = now.toISOString();
  const repo = automationsRepo(trx);
  const work = workRepo(trx);
  let cancelled = 0;
  for (const id of runIds) {
    if (!(await repo.finishRun(id, { status: 'cancelled', completed_at: at, error: JSON.stringify({ reason }) }))) continue;
    const item = await work.byKey(RUN_WORK_KIND, id);
    if (item) await work.cancel(item.id, at);
    logger.info({ runId: id, reason }, 'automation run cancelled');
    cancelled++;
  }
  return cancelled;
}

/**
 * Immutable versions' graphs, read once per process (with `db`: a transaction's inside one). A
 * crowd of runs of one version woken together waits on its one read.
 */
export function graphCache() {
  const cache = new Map<string, Graph>();
  const reading = new Map<string, { db: Db; graph: Promise<Graph> }>();
  const read = async (db: Db, automationId: string, version: number): Promise<Graph> => {
    const row = await automationsRepo(db).version(automationId, version);
    if (!row) throw new Error(`automations: version ${version} of ${automationId} is missing`);
    return graphOf(JSON.parse(row.steps) as Step[], JSON.parse(row.connections) as Connection[]);
  };
  return {
    async of(db: Db, automationId: string, version: number): Promise<Graph> {
      const key = `${automationId}:${version}`;
      const known = cache.get(key);
      if (known) return known;
      // Shared only on the same handle: a transaction's read may see a version not yet committed.
      const inFlight = reading.get(key);
      if (inFlight?.db === db) return inFlight.graph;
      const graph = read(db, automationId, version);
      reading.set(key, { db, graph });
      try {
        const value = await graph;
        if (cache.size > 2_000) cache.clear();
        cache.set(key, value);
        return value;
      } finally {
        if (reading.get(key)?.graph === graph) reading.delete(key);
      }
    },
  };
}

export type GraphCache = ReturnType<typeof graphCache>;
