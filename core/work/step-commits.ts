import type { Db } from '../../storage/sql/index.js';
import { workRepo, type WorkAdvance, type WorkItemRow } from '../../storage/repos/index.js';
import { batchingQueue, inRelaxedWriteTransaction, inWriteTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import type { StepResult, WorkHandler } from './types.js';

// The durable worker's step commits, grouped. The steps of different items that finish within one
// turn of the event loop share ONE transaction (one fsync). Each step moves its item only while
// its claim still holds the lease; the items whose move is the same (a crowd of runs finishing
// together: done, lease given back) move in one statement over their ids, and a count short of
// the ids means one of them lost its lease. Then, or when any step's own write fails, the
// transaction rolls back and every step commits alone, as a lone step always did: the one that
// lost its lease is refused (LostLease), the others go through. A step's writes must therefore be
// safe to run again, as a group commit's always had to be.

export class LostLease extends Error {}

export interface StepCommits {
  /** Commits the step's writes with its item's move; LostLease when the claim no longer holds it. */
  run(row: WorkItemRow, result: StepResult<unknown>): Promise<void>;
}

interface Pending {
  row: WorkItemRow;
  result: StepResult<unknown>;
  resolve(): void;
  reject(err: unknown): void;
}

export function stepCommits(db: Db, clock: Clock, leaseMs: number, maxBatch: number, handlerOf: (kind: string) => WorkHandler<unknown, unknown>): StepCommits {
  const commitBatch = async (batch: Pending[]) => {
    try {
      await transactionFor(batch)(db, async (trx) => {
        const now = clock.now().getTime();
        for (const group of movesOf(batch, now, leaseMs)) {
          if ((await workRepo(trx).advanceMany(group.ids, group.owner, iso(now), group.patch)) !== group.ids.length) throw new LostLease();
        }
        const written = await writeTogether(trx, batch, new Date(now), handlerOf);
        for (const step of batch) if (!written.has(step)) await step.result.write?.(trx);
      });
      batch.forEach((step) => step.resolve());
    } catch {
      for (const step of batch) {
        try {
          await transactionFor([step])(db, (trx) => commitAlone(trx, step));
          step.resolve();
        } catch (err) {
          step.reject(err);
        }
      }
    }
  };

  const commitAlone = async (trx: Db, step: Pending) => {
    const now = clock.now().getTime();
    if (!(await workRepo(trx).advance(step.row.id, step.row.lease_owner!, iso(now), advanceFor(step.result, now, leaseMs)))) throw new LostLease();
    await step.result.write?.(trx);
  };

  const add = batchingQueue<Pending>({ maxBatch }, (batch) => void commitBatch(batch));
  return {
    run: (row, result) => new Promise<void>((resolve, reject) => add({ row, result, resolve, reject })),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A durable commit unless every step in it is relaxed (a batch's commit is as durable as its most careful step). */
function transactionFor(batch: readonly Pending[]): typeof inWriteTransaction {
  const relaxed = batch.every(({ result }) => result.kind === 'continue' && result.relaxed === true);
  return relaxed ? inRelaxedWriteTransaction : inWriteTransaction;
}

/** The steps each kind's handler wrote together (writeMany), for the kinds that have one. */
async function writeTogether(trx: Db, batch: readonly Pending[], at: Date, handlerOf: (kind: string) => WorkHandler<unknown, unknown>): Promise<Set<Pending>> {
  const written = new Set<Pending>();
  const byKind = new Map<string, Pending[]>();
  for (const step of batch) {
    if (step.result.together === undefined) continue;
    const steps = byKind.get(step.row.kind);
    if (steps) steps.push(step);
    else byKind.set(step.row.kind, [step]);
  }
  for (const [kind, steps] of byKind) {
    const writeMany = handlerOf(kind).writeMany;
    if (!writeMany) continue;
    for (const i of await writeMany(trx, steps.map((s) => s.result), at)) written.add(steps[i]!);
  }
  return written;
}

/** The batch's items grouped by their claim and their move: one statement a group. */
function movesOf(batch: readonly Pending[], now: number, leaseMs: number) {
  const groups = new Map<string, { owner: string; patch: WorkAdvance; ids: string[] }>();
  for (const { row, result } of batch) {
    const patch = advanceFor(result, now, leaseMs);
    const key = `${row.lease_owner}\u0000${JSON.stringify(patch)}`;
    let group = groups.get(key);
    if (!group) {
      group = { owner: row.lease_owner!, patch, ids: [] };
      groups.set(key, group);
    }
    group.ids.push(row.id);
  }
  return groups.values();
}

function advanceFor(result: StepResult<unknown>, now: number, leaseMs: number): WorkAdvance {
  const cursor = 'cursor' in result && result.cursor !== undefined ? JSON.stringify(result.cursor) : undefined;
  const finished = { lease_owner: null, lease_until: null, ...(cursor === undefined ? {} : { cursor }) };
  switch (result.kind) {
    case 'done':
      return { ...finished, state: 'done' };
    case 'failed':
      return { ...finished, state: 'failed', error: result.error };
    case 'continue':
      if (result.delayMs === undefined) return { cursor, lease_until: new Date(now + leaseMs).toISOString() };
      return { ...finished, state: 'queued', due_at: new Date(now + result.delayMs).toISOString() };
  }
}
