import type { Db } from '../../storage/sql/index.js';
import { automationsRepo, teamListensTo, type AutomationRunRow, type AutomationRunStepRow, type RunStepStatus } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import type { ContactWritesIn } from '../contacts/index.js';
import type { Logger } from '../logger.js';
import type { StepResult, StepWrite, WorkHandler, WorkItem } from '../work/index.js';
import { runReader } from './run-reader.js';
import { finishRun, RUN_WORK_KIND, startRun, type GraphCache, type RunPayload } from './lifecycle.js';
import type { Graph, Step } from './graph.js';
import type { TemplateSender } from './ports.js';
import { runStep, type Outcome } from './steps.js';

// A run is a durable work item (kind `automation_run`, key = the run id): one graph step per work
// step, its effects (the email of a send_email step, a contact's change, a segment membership)
// committed in the worker's transaction with the cursor that moves past it. A crash or kill -9
// resumes at the last committed cursor, so no step's effect lands twice; a delay parks the item
// (`delayMs`) and the worker wakes it at its time, across restarts.

export interface RunnerDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  graphs: GraphCache;
  templates: TemplateSender;
  contacts: ContactWritesIn;
}

/** The next graph step to run; `wakeAt` once a delay step has parked. */
export interface RunCursor {
  at: string;
  wakeAt?: string;
}

export function automationRunWork(deps: RunnerDeps): WorkHandler<RunPayload, RunCursor> {
  const runById = runReader(deps.db);
  return {
    kind: RUN_WORK_KIND,
    async step(item: WorkItem<RunPayload, RunCursor>): Promise<StepResult<RunCursor>> {
      const run = await runById(item.payload.run_id);
      // Cancelled (stop, delete, an exit event) or gone: nothing more to do.
      if (!run || run.status !== 'running') return { kind: 'done' };
      const graph = await deps.graphs.of(deps.db, run.automation_id, run.version);
      if (item.cursor === undefined) return begin(deps, run, graph);
      const step = graph.byKey.get(item.cursor.at);
      if (!step) throw new Error(`automations: run ${run.id} is at unknown step ${item.cursor.at}`);
      const outcome = await runStep(deps, run, step, item.cursor);
      return settle(deps, run, graph, step, outcome);
    },
    writeMany: (trx, results, at) => finishTogether(deps, trx, results, at),
  };
}

/** A run's last step that wrote nothing of its own: its record and the run's finish, batchable. */
interface Finishing {
  run: AutomationRunRow;
  step: Step;
  now: Date;
  output: unknown;
}

/**
 * The runs that finished together (a crowd woken by one delay, completing): their step records in
 * a few statements and their runs finished in a few more, the rows `settle`'s write makes. Runs
 * whose team's endpoints want `automation.run.completed` are left to that write, which emits it.
 * A run cancelled meanwhile makes the count short: the batch then commits step by step.
 */
async function finishTogether(deps: RunnerDeps, trx: Db, results: readonly StepResult<RunCursor>[], at: Date): Promise<ReadonlySet<number>> {
  const quiet: { index: number; finishing: Finishing }[] = [];
  for (const [index, result] of results.entries()) {
    const finishing = result.together as Finishing | undefined;
    if (finishing && !(await teamListensTo(trx, finishing.run.team_id, 'automation.run.completed'))) quiet.push({ index, finishing });
  }
  if (quiet.length < 2) return new Set();
  const repo = automationsRepo(trx);
  await repo.putRunSteps(quiet.map(({ finishing: f }) => stepRecord(f.run, f.step, 'completed', f.now, f.output)));
  const finished = await repo.finishRuns(quiet.map(({ finishing: f }) => f.run.id), { status: 'completed', completed_at: at.toISOString(), error: null });
  if (finished !== quiet.length) throw new Error('automations: a run finishing in the batch was no longer running');
  for (const { finishing: f } of quiet) {
    deps.logger.info({ runId: f.run.id, automationId: f.run.automation_id, step: f.step.key, contactId: f.run.contact_id }, 'automation run completed');
  }
  return new Set(quiet.map((q) => q.index));
}

function begin(deps: RunnerDeps, run: AutomationRunRow, graph: Graph): StepResult<RunCursor> {
  const now = deps.clock.now();
  const next = graph.next(graph.trigger.key);
  const write: StepWrite = async (trx) => {
    await startRun(trx, run, now);
    await record(trx, run, graph.trigger, 'completed', now, { event: run.event_name });
    if (next === null) await finishRun(trx, run, 'completed', now);
  };
  deps.logger.info({ runId: run.id, automationId: run.automation_id, contactId: run.contact_id }, 'automation run started');
  return next === null ? { kind: 'done', write } : { kind: 'continue', cursor: { at: next }, write };
}

function settle(deps: RunnerDeps, run: AutomationRunRow, graph: Graph, step: Step, outcome: Outcome): StepResult<RunCursor> {
  const now = deps.clock.now();
  const ids = { runId: run.id, automationId: run.automation_id, step: step.key };
  switch (outcome.kind) {
    case 'park':
      return {
        kind: 'continue', cursor: { at: step.key, wakeAt: outcome.wakeAt.toISOString() }, delayMs: Math.max(0, outcome.wakeAt.getTime() - now.getTime()),
        write: outcome.first ? (trx) => record(trx, run, step, 'waiting', now, { until: outcome.wakeAt.toISOString() }) : undefined,
      };
    case 'failed': {
      deps.logger.warn({ ...ids, error: outcome.error }, 'automation run failed');
      return {
        kind: 'failed', error: String(outcome.error.message ?? outcome.error.name),
        write: async (trx) => {
          await record(trx, run, step, 'failed', now, null, outcome.error);
          await finishRun(trx, run, 'failed', now, { step: step.key, ...outcome.error });
        },
      };
    }
    case 'next': {
      const next = graph.next(step.key, outcome.branch);
      const write: StepWrite = async (trx) => {
        // A step whose own write refused (a send over quota) has failed the run there.
        const failure = await outcome.write?.(trx);
        if (failure) {
          await record(trx, run, step, 'failed', now, null, failure);
          await finishRun(trx, run, 'failed', now, { step: step.key, ...failure });
          return;
        }
        await record(trx, run, step, 'completed', now, outcome.output ?? null);
        if (next === null && (await finishRun(trx, run, 'completed', now))) deps.logger.info({ ...ids, contactId: run.contact_id }, 'automation run completed');
      };
      const afterCommit = outcome.afterCommit;
      if (next !== null) return { kind: 'continue', cursor: { at: next }, write, afterCommit };
      const together: Finishing | undefined = outcome.write ? undefined : { run, step, now, output: outcome.output ?? null };
      return { kind: 'done', write, afterCommit, together };
    }
  }
}

async function record(trx: Db, run: AutomationRunRow, step: Step, status: RunStepStatus, now: Date, output: unknown, error?: unknown): Promise<void> {
  await automationsRepo(trx).putRunStep(stepRecord(run, step, status, now, output, error));
}

function stepRecord(run: AutomationRunRow, step: Step, status: RunStepStatus, now: Date, output: unknown, error?: unknown): AutomationRunStepRow {
  const at = now.toISOString();
  return {
    run_id: run.id, step_key: step.key, type: step.type, status, output: output === null || output === undefined ? null : JSON.stringify(output),
    error: error === undefined ? null : JSON.stringify(error), created_at: at, started_at: at, completed_at: status === 'waiting' ? null : at,
  };
}
