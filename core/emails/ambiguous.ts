import type { Db } from '../../storage/sql/index.js';
import { ambiguousBefore } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { DeliveryRecorder } from './delivery.js';

// Reliability contract 2-3: a submission whose data went out without a reply is never resent; a
// delivery report naming it settles it; with none after two hours it fails with reason
// `ambiguous_submission` (email.failed), which the dashboard and the webhooks report.

export const ambiguousWindowMs = 2 * 3600_000;

export async function sweepAmbiguous(deps: { db: Db; clock: Clock; logger: Logger; recorder: DeliveryRecorder }): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - ambiguousWindowMs).toISOString();
  let failed = 0;
  for (;;) {
    const rows = await ambiguousBefore(deps.db, cutoff, 500);
    if (rows.length === 0) break;
    const results = await Promise.all(rows.map((row) => deps.recorder.record(row.id, { kind: 'failed', reason: 'ambiguous_submission' })));
    failed += results.filter(Boolean).length;
    if (rows.length < 500) break;
  }
  if (failed) deps.logger.warn({ failed }, 'ambiguous submissions failed after two hours without a delivery report');
  return failed;
}
