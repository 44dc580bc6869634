import type { Db, TeamScope } from '../../storage/sql/index.js';
import { retentionRepo } from '../../storage/repos/index.js';
import type { Spool } from '../../storage/files/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { pruneByWindows, type RetentionWindows } from '../retention-windows.js';

// The spec: "A dropped record ages out on the plan's data retention window" and "A kept message has
// no retention window". Only records with a dropped_reason are ever deleted here.

const BATCH = 500;

export interface DroppedPruneResult {
  /** Dropped records deleted. */
  records: number;
  /** Raw files removed with them (a parse_failed drop keeps its raw source until now). */
  raw_files: number;
}

/**
 * Deletes dropped received records older than each team's window, in short transactions, then their
 * raw files. A crash between the commit and the unlink leaves a file no record names: the orphan
 * sweep (core/retention/orphans.ts) removes it. received_usage counts kept messages only, so it is
 * not touched.
 */
export async function pruneDroppedReceived(deps: { db: Db; spool: Spool; clock: Clock }, windows: RetentionWindows): Promise<DroppedPruneResult> {
  const result: DroppedPruneResult = { records: 0, raw_files: 0 };
  await pruneByWindows(windows, deps.clock.now(), async (before, scope) => {
    await pruneDroppedIn(deps, before, scope, result);
    return 0;
  });
  return result;
}

async function pruneDroppedIn(deps: { db: Db; spool: Spool }, before: string, scope: TeamScope, result: DroppedPruneResult): Promise<void> {
  for (;;) {
    const batch = await retentionRepo(deps.db).droppedBefore(before, BATCH, scope);
    if (batch.length === 0) return;
    result.records += await inTransaction(deps.db, (trx) => retentionRepo(trx).deleteDropped(batch.map((r) => r.id)));
    for (const row of batch) {
      if (row.raw_key === null) continue;
      await deps.spool.remove(row.raw_key);
      result.raw_files++;
    }
    if (batch.length < BATCH) return;
  }
}
