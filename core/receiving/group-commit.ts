import type { Db } from '../../storage/db.js';
import { inWriteTransaction } from '../../storage/emails-tx.js';

// Group commit for received mail. better-sqlite3 commits on the event loop, and with
// synchronous=FULL each commit waits for an fsync: one commit per message would spend the loop on
// fsyncs. Messages finishing within a short window share ONE transaction (one fsync); each SMTP
// session gets its 250 once that transaction is on disk. If the shared transaction fails, each
// write is retried alone so one bad message cannot fail the others (a failed transaction left
// nothing behind, so a retry is safe).

export interface GroupCommit {
  run<T>(write: (trx: Db) => Promise<T>): Promise<T>;
}

export interface GroupCommitOptions {
  /** How long the first write of a batch waits for others (ms); 0 flushes on the next loop turn. */
  windowMs: number;
  maxBatch: number;
}

interface Pending {
  write: (trx: Db) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export function groupCommit(db: Db, options: GroupCommitOptions): GroupCommit {
  let queue: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  const flush = () => {
    timer = undefined;
    const items = queue;
    queue = [];
    // One transaction at a time: the next batch starts after this one is on disk.
    flushing = flushing.then(() => commit(db, items));
  };
  const schedule = () => {
    if (queue.length >= options.maxBatch) {
      clearTimeout(timer);
      flush();
    } else {
      timer ??= setTimeout(flush, options.windowMs);
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

async function commit(db: Db, items: Pending[]): Promise<void> {
  if (items.length === 0) return;
  try {
    const results = await inWriteTransaction(db, async (trx) => {
      const out: unknown[] = [];
      for (const item of items) out.push(await item.write(trx));
      return out;
    });
    items.forEach((item, i) => item.resolve(results[i]));
  } catch {
    for (const item of items) {
      try {
        item.resolve(await inWriteTransaction(db, item.write));
      } catch (err) {
        item.reject(err);
      }
    }
  }
}
