import type { Db } from './db.js';
import { inRelaxedWriteTransaction, inWriteTransaction } from './write-transaction.js';

// Group commit for the write path (sends accepted, delivery marks and outcomes, received mail):
// the writes asked for within one window share ONE transaction — one fsync — and each caller
// resumes once that transaction is on disk. If the shared transaction fails, each write is retried
// alone so one bad write cannot sink the others (every caller's write is conditional on the state
// it expects, or left nothing behind, so a retry is safe). Batches do not wait for each other: the
// next one may commit while the previous one's fsync runs (write-transaction.ts).

export interface GroupCommit {
  run<T>(write: (trx: Db) => Promise<T>): Promise<T>;
}

export interface GroupCommitOptions {
  /** How long the first write of a batch waits for others (ms); 0 commits on the next loop turn. */
  windowMs?: number;
  maxBatch?: number;
  /** Without its own fsync: for records whose loss in a crash only makes svc more cautious. */
  relaxed?: boolean;
}

interface Pending {
  write: (trx: Db) => Promise<unknown>;
  /** This write may do without its own fsync. */
  relaxed: boolean;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export function groupCommit(db: Db, options: GroupCommitOptions = {}): GroupCommit {
  const queue = groupQueue(db, options);
  const relaxed = !!options.relaxed;
  return { run: (write) => queue(write, relaxed) };
}

// Bounds what a relaxed write waits when no durable one comes (an idle region, the last outcomes
// of a run): well under a remote MX's reply time, so a busy destination's sessions barely notice.
const DEFAULT_LINGER_MS = 4;

export interface BatchingOptions extends Pick<GroupCommitOptions, 'windowMs' | 'maxBatch'> {
  /** How long an item added as not urgent waits for an urgent one to share its batch (ms). */
  lingerMs?: number;
}

/**
 * A group commit for writes of both kinds, sharing one queue: the writes asked for within one
 * window share ONE transaction, durable (its own fsync) if any of them needs it, relaxed if none
 * does. A relaxed write that rides in a durable transaction resolves after its fsync: later, never
 * less safe. The delivery side marks one recipient `submitting` (durable) while it records another's
 * outcome (relaxed): as one transaction they cost one commit instead of two.
 *
 * A relaxed write does not start a transaction of its own at once: it lingers up to `lingerMs` for
 * the next durable write and rides in its transaction. Under load one comes within a millisecond,
 * and the outcomes that used to commit alone (a quarter of the delivery side's transactions, each
 * a BEGIN, a COMMIT and its WAL pages) stop costing a commit of their own.
 */
export function sharedGroupCommit(db: Db, options: BatchingOptions = {}): { durable: GroupCommit; relaxed: GroupCommit } {
  const queue = groupQueue(db, { lingerMs: DEFAULT_LINGER_MS, ...options });
  return { durable: { run: (write) => queue(write, false, true) }, relaxed: { run: (write) => queue(write, true, false) } };
}

/**
 * The batching under every group commit: items added within one window (0: one turn of the event
 * loop) are handed to `commit` together, at most `maxBatch` at a time; a full batch goes at once.
 * An item that is not urgent waits up to `lingerMs` instead, or until an urgent one comes.
 */
export function batchingQueue<T>(options: BatchingOptions, commit: (items: T[]) => void): (item: T, urgent?: boolean) => void {
  const { windowMs = 0, maxBatch = 500, lingerMs = windowMs } = options;
  const queue: T[] = [];
  let scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;
  let scheduledUrgent = false;

  const cancel = () => {
    clearTimeout(scheduled as NodeJS.Timeout);
    clearImmediate(scheduled as NodeJS.Immediate);
    scheduled = undefined;
  };
  const flush = () => {
    cancel();
    const items = queue.splice(0, maxBatch);
    // What a full batch left behind has waited its turn already.
    if (queue.length) schedule(true);
    commit(items);
  };
  const schedule = (urgent: boolean) => {
    if (queue.length >= maxBatch) return flush();
    if (scheduled && (scheduledUrgent || !urgent)) return;
    cancel();
    scheduledUrgent = urgent;
    const waitMs = urgent ? windowMs : lingerMs;
    scheduled = waitMs > 0 ? setTimeout(flush, waitMs) : setImmediate(flush);
  };
  return (item, urgent = true) => {
    queue.push(item);
    schedule(urgent);
  };
}

function groupQueue(db: Db, options: BatchingOptions) {
  const transactionFor = (relaxed: boolean) => (relaxed ? inRelaxedWriteTransaction : inWriteTransaction);
  const commit = async (items: Pending[]) => {
    if (items.length === 0) return;
    try {
      const results = await transactionFor(items.every((item) => item.relaxed))(db, async (trx) => {
        const out: unknown[] = [];
        for (const item of items) out.push(await item.write(trx));
        return out;
      });
      items.forEach((item, i) => item.resolve(results[i]));
    } catch {
      for (const item of items) {
        try {
          item.resolve(await transactionFor(item.relaxed)(db, item.write));
        } catch (err) {
          item.reject(err);
        }
      }
    }
  };
  const add = batchingQueue<Pending>(options, (items) => void commit(items));
  return <T>(write: (trx: Db) => Promise<T>, relaxed: boolean, urgent = true) => new Promise<T>((resolve, reject) => {
    add({ write, relaxed, resolve: resolve as (v: unknown) => void, reject }, urgent);
  });
}
