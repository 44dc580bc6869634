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

export type StepResult<C> =
  /** More to do; `delayMs` parks the item until then (e.g. an automation's delay step). */
  | { kind: 'continue'; cursor: C; write?: StepWrite; delayMs?: number; afterCommit?: AfterCommit }
  | { kind: 'done'; cursor?: C; write?: StepWrite; afterCommit?: AfterCommit }
  | { kind: 'failed'; error: string; write?: StepWrite; afterCommit?: AfterCommit };

export interface WorkHandler<P, C> {
  kind: string;
  /** One small unit of work: reads what it needs, answers its writes and the next cursor. */
  step(item: WorkItem<P, C>): Promise<StepResult<C>>;
}
