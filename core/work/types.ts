import type { Db } from '../../storage/sql/index.js';

/** One item as its handler sees it: what to do (payload) and how far it got (cursor). */
export interface WorkItem<P, C> {
  id: string;
  kind: string;
  key: string;
  teamId: string | null;
  /** Steps committed so far. */
  steps: number;
  payload: P;
  /** Undefined before the first step commits. */
  cursor: C | undefined;
}

/** The writes of one step, committed together with its cursor. */
export type StepWrite = (trx: Db) => Promise<void>;

/** Told once the step's transaction committed (best-effort nudges: wake a queue); never for a lost lease. */
export type AfterCommit = () => void;

/**
 * `together`: what the handler's `writeMany` needs to write this step's rows together with other
 * steps' (the same rows `write` makes); `write` stays the step's own way, used when it commits alone.
 */
export type StepResult<C> =
  /**
   * More to do; `delayMs` parks the item until then (e.g. an automation's delay step). `relaxed`:
   * the step's commit need not wait for its own fsync (the next durable commit's covers it). Lost
   * in a power cut, the step runs again from the cursor before it, so only a step whose work
   * nobody outside the database has seen yet may say so.
   */
  | { kind: 'continue'; cursor: C; write?: StepWrite; delayMs?: number; afterCommit?: AfterCommit; together?: unknown; relaxed?: true }
  | { kind: 'done'; cursor?: C; write?: StepWrite; afterCommit?: AfterCommit; together?: unknown }
  | { kind: 'failed'; error: string; write?: StepWrite; afterCommit?: AfterCommit; together?: unknown };

export interface WorkHandler<P, C> {
  kind: string;
  /** One small unit of work: reads what it needs, answers its writes and the next cursor. */
  step(item: WorkItem<P, C>): Promise<StepResult<C>>;
  /**
   * Writes, in the shared transaction of steps committing together, the rows of those steps it can
   * write in a few statements (their `together`), exactly the rows their `write` would make;
   * answers the indexes of the steps it wrote, whose `write` is then not run. Throwing rolls the
   * batch back, and every step then commits alone with its own `write`.
   */
  writeMany?(trx: Db, results: readonly StepResult<C>[], at: Date): Promise<ReadonlySet<number>>;
}
