import type { Db } from '../../storage/sql/index.js';
import { emailsRepo } from '../../storage/repos/index.js';
import { cancelScheduled, rescheduleScheduled } from '../../storage/repos/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { missingField, notFound, ServiceError } from '../errors.js';
import { emitEvent } from '../outbox/index.js';
import { looksLikeId } from '../ids.js';
import type { Logger } from '../logger.js';
import { parseScheduledAt } from '../scheduling.js';
import { envelopeData } from './envelope.js';

interface ScheduleDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  wake(region: string): void;
}

const locked = () => new ServiceError(409, 'resource_locked', 'This email has already been dispatched; it can no longer be canceled or rescheduled.');

async function findScheduled(db: Db, teamId: string, id: string) {
  const row = looksLikeId(id) ? await emailsRepo(db).byId(teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound('Email');
  return row;
}

/** Cancels a scheduled email not yet dispatched; a dispatched one is 409 resource_locked. */
export async function cancelEmail(deps: ScheduleDeps, teamId: string, id: string): Promise<{ object: 'email'; id: string }> {
  const email = await findScheduled(deps.db, teamId, id);
  if (email.status === 'canceled') return { object: 'email', id: email.id };
  const now = deps.clock.now();
  const canceled = await inTransaction(deps.db, async (trx) => {
    // Conditional on the status: the dispatcher may have taken it a moment ago.
    if (!(await cancelScheduled(trx, email.id, now.toISOString()))) return false;
    await emitEvent(eventsRepo(trx), teamId, 'email.canceled', envelopeData(email), now);
    return true;
  });
  if (!canceled) throw locked();
  deps.logger.info({ emailId: email.id, teamId }, 'email canceled');
  return { object: 'email', id: email.id };
}

/** Moves a scheduled email to a new time (same rules as scheduled_at on send). */
export async function rescheduleEmail(deps: ScheduleDeps, teamId: string, id: string, raw: string | undefined): Promise<{ object: 'email'; id: string }> {
  const email = await findScheduled(deps.db, teamId, id);
  if (raw === undefined || raw === null) throw missingField('scheduled_at');
  const at = parseScheduledAt(raw, deps.clock.now());
  if (email.status !== 'scheduled') throw locked();
  const moved = await inTransaction(deps.db, (trx) => rescheduleScheduled(trx, email.id, at, deps.clock.now().toISOString()));
  if (!moved) throw locked();
  deps.logger.info({ emailId: email.id, teamId, scheduledAt: at }, 'email rescheduled');
  deps.wake(email.region);
  return { object: 'email', id: email.id };
}
