import { broadcastsRepo, workRepo } from '../../storage/repos/index.js';
import { inWriteTransaction, type Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { FAN_OUT_KIND, type FanOutPayload } from './fan-out.js';

// The jobs role's minute: scheduled broadcasts whose time came are released (scheduled → queued),
// and every queued or sending broadcast has its fan-out item (enqueueing is idempotent by the
// broadcast's id; a send enqueues it in its own transaction, so this only repairs). The fan-out
// item of a scheduled broadcast is already due at its time; release makes the state say so even
// while the worker is busy elsewhere.

export interface ReleaseBroadcastsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
}

export async function releaseDueBroadcasts(deps: ReleaseBroadcastsDeps, limit = 500): Promise<number> {
  const now = deps.clock.now().toISOString();
  const due = await broadcastsRepo(deps.db).dueScheduled(now, limit);
  let released = 0;
  for (const b of due) {
    const moved = await inWriteTransaction(deps.db, async (trx) => {
      if (!(await broadcastsRepo(trx).transition(b.team_id, b.id, ['scheduled'], { status: 'queued', updated_at: now }))) return false;
      await enqueueFanOut(trx, b.team_id, b.id, now);
      return true;
    });
    if (moved) {
      released += 1;
      deps.logger.info({ broadcastId: b.id, teamId: b.team_id, scheduledAt: b.scheduled_at }, 'scheduled broadcast released');
    }
  }
  for (const b of await broadcastsRepo(deps.db).inFlight(limit)) await enqueueFanOut(deps.db, b.team_id, b.id, now);
  return released;
}

export async function enqueueFanOut(db: Db, teamId: string, broadcastId: string, dueAt: string): Promise<void> {
  const payload: FanOutPayload = { teamId, broadcastId };
  await workRepo(db).enqueue({ id: newId(), kind: FAN_OUT_KIND, key: broadcastId, team_id: teamId, payload: JSON.stringify(payload), due_at: dueAt, created_at: dueAt });
}
