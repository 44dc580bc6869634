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
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export function groupCommit(db: Db, options: GroupCommitOptions = {}): GroupCommit {
  const { windowMs = 0, maxBatch = 500 } = options;
  const transaction = options.relaxed ? inRelaxedWriteTransaction : inWriteTransaction;
  let queue: Pending[] = [];
  let scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;

  const flush = () => {
    clearTimeout(scheduled as NodeJS.Timeout);
    clearImmediate(scheduled as NodeJS.Immediate);
    scheduled = undefined;
    const items = queue.splice(0, maxBatch);
    if (queue.length) schedule();
    void commit(items);
  };
  const schedule = () => {
    if (queue.length >= maxBatch) return flush();
    scheduled ??= windowMs > 0 ? setTimeout(flush, windowMs) : setImmediate(flush);
  };
  const commit = async (items: Pending[]) => {
    if (items.length === 0) return;
    try {
      const results = await transaction(db, async (trx) => {
        const out: unknown[] = [];
        for (const item of items) out.push(await item.write(trx));
        return out;
      });
      items.forEach((item, i) => item.resolve(results[i]));
    } catch {
      for (const item of items) {
        try {
          item.resolve(await transaction(db, item.write));
        } catch (err) {
          item.reject(err);
        }
      }
    }
  };
  return {
    run<T>(write: (trx: Db) => Promise<T>) {
      return new Promise<T>((resolve, reject) => {
        queue.push({ write, resolve: resolve as (v: unknown) => void, reject });
        schedule();
      });
    },
  };
}
