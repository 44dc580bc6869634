import type { Db } from '../../storage/sql/index.js';
import { automationsRepo, type AutomationRunRow } from '../../storage/repos/index.js';

/**
 * Reads runs by id, the reads asked for in one turn of the event loop answered by one query: the
 * worker claims a crowd of runs at once (all those a shared delay wakes) and each of their steps
 * starts by reading its run, so they arrive together. Reads, not writes: no transaction is shared.
 */
export function runReader(db: Db, maxBatch = 500): (id: string) => Promise<AutomationRunRow | undefined> {
  let waiting = new Map<string, ((row: AutomationRunRow | undefined, err?: unknown) => void)[]>();
  let scheduled = false;

  const flush = async () => {
    scheduled = false;
    const batch = waiting;
    waiting = new Map();
    const ids = [...batch.keys()];
    for (let from = 0; from < ids.length; from += maxBatch) {
      const chunk = ids.slice(from, from + maxBatch);
      try {
        const rows = new Map((await automationsRepo(db).runsByIds(chunk)).map((row) => [row.id, row]));
        for (const id of chunk) for (const answer of batch.get(id)!) answer(rows.get(id));
      } catch (err) {
        for (const id of chunk) for (const answer of batch.get(id)!) answer(undefined, err);
      }
    }
  };

  return (id) => new Promise((resolve, reject) => {
    const answers = waiting.get(id) ?? [];
    answers.push((row, err) => (err === undefined ? resolve(row) : reject(err)));
    waiting.set(id, answers);
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => void flush());
    }
  });
}
