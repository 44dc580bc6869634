import type { Db } from '../../storage/db.js';
import { inRelaxedWriteTransaction, inWriteTransaction } from '../../storage/emails-tx.js';

// Group commit for the delivery side: every write asked for in one event-loop turn commits in ONE
// transaction (one fsync with synchronous=FULL) and each caller resumes once it is on disk. If
// the shared transaction fails, each write is retried alone so one bad write cannot sink the
// others (every write here is conditional on the state it expects, so a retry is safe).

export interface CommitBatcher {
  run<T>(write: (trx: Db) => Promise<T>): Promise<T>;
}

interface Pending {
  write: (trx: Db) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export function commitBatcher(db: Db, maxBatch = 500, options: { relaxed?: boolean } = {}): CommitBatcher {
  const transaction = options.relaxed ? inRelaxedWriteTransaction : inWriteTransaction;
  let queue: Pending[] = [];
  let scheduled = false;
  const flush = async () => {
    scheduled = false;
    const items = queue.splice(0, maxBatch);
    if (queue.length) schedule();
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
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => void flush());
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
