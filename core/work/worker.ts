import type { Db } from '../../storage/sql/index.js';
import { workRepo, type WorkItemRow } from '../../storage/repos/index.js';
import { inRelaxedWriteTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { StepResult, WorkHandler, WorkItem } from './types.js';
import { LostLease, stepCommits } from './step-commits.js';

// The one durable worker pattern for long-running work (contact imports, broadcast fan-out,
// automation runs). An item is claimed with a lease, then worked in small steps; each step's
// writes commit in one transaction with the item's new cursor, and only while the lease is still
// this worker's. So:
// - restart-safe and kill -9 safe: a crash loses at most the step in flight, whose writes rolled
//   back with its cursor; the lease lapses and the next claim resumes from the last commit;
// - one owner at a time, also across processes on PostgreSQL (the claim skips locked rows);
// - nothing done twice: a step whose lease was lost (lapsed and taken, or the item canceled)
//   cannot commit.
// A step must therefore be small (well inside the lease) and put its effects in `write`; an
// effect outside the database (mail, a webhook) is made durable as a row there and done by its
// own path (the outbound queue, the webhook dispatcher), never from inside a step.
// Steps of different items that finish together share one group-committed transaction: a crowd of
// runs waking at one instant costs a few transactions, not one each, and the items that move alike
// move in one statement (step-commits.ts). One step that lost its lease sinks the batch, whose
// steps are then committed one by one, so it alone is refused.

export interface DurableWorkerDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  handlers: readonly WorkHandler<any, any>[];
  /** How long a claim holds without a step committing. */
  leaseMs: number;
  /** Items worked at once by this process. */
  concurrency: number;
  /** Steps one item runs before it yields its place to other due items. */
  stepsPerTurn: number;
  /** After an enqueue added an item: the runners, in whatever process, look at once. */
  wake?: () => void;
}

export interface EnqueueOptions {
  teamId?: string | null;
  dueAt?: Date;
}

export interface DurableWorker {
  /** Adds work of a kind, once per key: enqueueing the same key again answers the first item. */
  enqueue(kind: string, key: string, payload: unknown, options?: EnqueueOptions): Promise<WorkItemRow>;
  /** Claims what is due and works each item for a turn; answers how many steps committed. */
  runDue(): Promise<number>;
  /** Milliseconds until the earliest waiting item falls due (0 or less: due now); undefined when none waits. */
  msUntilDue(): Promise<number | undefined>;
  cancel(id: string): Promise<boolean>;
}

/** Seconds before an item whose step threw is tried again. */
const retryAfterErrorMs = 5_000;
/** At most this many items' steps share a transaction (an import's or a fan-out's step is large). */
const stepsPerTransaction = 256;

export function durableWorker(deps: DurableWorkerDeps): DurableWorker {
  const handlers = new Map(deps.handlers.map((h) => [h.kind, h]));
  const kinds = [...handlers.keys()];
  const iso = (ms: number) => new Date(ms).toISOString();
  const commits = stepCommits(deps.db, deps.clock, deps.leaseMs, stepsPerTransaction, (kind) => handlers.get(kind)!);

  async function commit(row: WorkItemRow, result: StepResult<unknown>): Promise<void> {
    await commits.run(row, result);
    result.afterCommit?.();
  }

  /** Works one claimed item until it finishes, parks, yields its turn, or loses its lease. */
  async function turn(row: WorkItemRow): Promise<number> {
    const handler = handlers.get(row.kind)!;
    const item = toItem(row);
    // Fields, not a child logger: most turns log nothing, and a child costs as much as a small step.
    const ids = { workId: row.id, kind: row.kind };
    let steps = 0;
    try {
      for (;;) {
        const result = await handler.step(item);
        const last = result.kind !== 'continue' || result.delayMs !== undefined || steps + 1 >= deps.stepsPerTurn;
        await commit(row, last && result.kind === 'continue' ? { ...result, delayMs: result.delayMs ?? 0 } : result);
        steps += 1;
        if (result.kind === 'done') deps.logger.info({ ...ids, steps: row.steps + steps }, 'work done');
        if (result.kind === 'failed') deps.logger.warn({ ...ids, steps: row.steps + steps, error: result.error }, 'work failed');
        if (last) return steps;
        item.cursor = result.cursor;
        item.steps += 1;
      }
    } catch (err) {
      if (err instanceof LostLease) {
        deps.logger.warn({ ...ids, steps }, 'work lease lost: another owner or a cancel has it');
        return steps;
      }
      deps.logger.error({ ...ids, err, steps }, 'work step failed; retried later');
      await release(row, retryAfterErrorMs, (err as Error).message).catch(() => undefined);
      return steps;
    }
  }

  const release = (row: WorkItemRow, delayMs: number, error: string) => {
    const now = deps.clock.now().getTime();
    return workRepo(deps.db).advance(row.id, row.lease_owner!, iso(now), { state: 'queued', lease_owner: null, lease_until: null, due_at: iso(now + delayMs), error });
  };

  return {
    async enqueue(kind, key, payload, options = {}) {
      if (!handlers.has(kind)) throw new Error(`no work handler for kind ${kind}`);
      const now = deps.clock.now();
      const id = newId();
      const row = await workRepo(deps.db).enqueue({
        id, kind, key, team_id: options.teamId ?? null, payload: JSON.stringify(payload),
        due_at: (options.dueAt ?? now).toISOString(), created_at: now.toISOString(),
      });
      if (row.id === id) {
        deps.logger.info({ workId: id, kind, key }, 'work enqueued');
        deps.wake?.();
      }
      return row;
    },
    async runDue() {
      const now = deps.clock.now().getTime();
      // Relaxed: a claim lost in a crash is a lease nobody holds, taken again once it lapses; and the
      // claim's fsync would otherwise block the event loop (an autocommit's is synchronous).
      // An owner per claim, not per process: the runner keeps two claims in flight, and a claim that
      // takes an item whose lease lapsed mid-turn must fence out that turn's commits, its own lane's too.
      const owner = `worker-${newId()}`;
      const claimed = await inRelaxedWriteTransaction(deps.db, (trx) => workRepo(trx).claim(kinds, iso(now), owner, iso(now + deps.leaseMs), deps.concurrency));
      const steps = await Promise.all(claimed.map(turn));
      return steps.reduce((a, b) => a + b, 0);
    },
    async msUntilDue() {
      const now = deps.clock.now();
      const due = await workRepo(deps.db).nextDue(kinds, now.toISOString());
      return due === undefined ? undefined : Date.parse(due) - now.getTime();
    },
    cancel: (id) => workRepo(deps.db).cancel(id, deps.clock.now().toISOString()),
  };
}

function toItem(row: WorkItemRow): WorkItem<unknown, unknown> {
  return {
    id: row.id, kind: row.kind, key: row.key, teamId: row.team_id, steps: row.steps,
    payload: JSON.parse(row.payload) as unknown,
    cursor: row.cursor === null ? undefined : (JSON.parse(row.cursor) as unknown),
  };
}
