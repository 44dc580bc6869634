import type { Db } from '../../storage/sql/index.js';
import { emailsRepo } from '../../storage/repos/index.js';
import { recipientById } from '../../storage/repos/index.js';
import type { EmailRecipientRow } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import type { DeliveryRecorder } from '../emails/index.js';
import { envelopeData } from '../emails/index.js';
import { emitEmailEvent } from '../outbox/index.js';
import type { FeedbackRecipient, FeedbackSink } from './feedback.js';

// The FeedbackSink over the sending side: bounces, settled submissions and complaints go through
// its delivery recorder (as reports, which may correct a delivered or ambiguous recipient); a
// delay only adds its event, since the remote system keeps retrying and nothing is resent.

export interface EmailFeedbackDeps {
  db: Db;
  clock: Clock;
  recorder: Pick<DeliveryRecorder, 'record' | 'recordComplaint'>;
}

/** States in which the DATA terminator went out and no reply said what happened. */
const unsettled = new Set(['submitting', 'ambiguous']);

export function emailFeedbackSink(deps: EmailFeedbackDeps): FeedbackSink {
  const view = async (row: EmailRecipientRow | undefined): Promise<FeedbackRecipient | undefined> =>
    row ? { recipientId: row.id, emailId: row.email_id, teamId: row.team_id, address: row.address } : undefined;
  const settle = async (recipientId: string, response: string) => {
    const row = await recipientById(deps.db, recipientId);
    if (!row || !unsettled.has(row.state)) return false;
    return deps.recorder.record(recipientId, { kind: 'delivered', response }, { report: true });
  };
  return {
    recipient: async (recipientId) => view(await recipientById(deps.db, recipientId)),
    bounce: (recipientId, bounce, response) => deps.recorder.record(recipientId, { kind: 'bounced', response, bounce }, { report: true }),
    delivered: settle,
    async delay(recipientId, delay, response) {
      await settle(recipientId, response);
      return inTransaction(deps.db, async (trx) => {
        const row = await recipientById(trx, recipientId);
        const email = row && (await emailsRepo(trx).byIdAnyTeam(row.email_id));
        if (!row || !email || ['bounced', 'failed', 'suppressed', 'canceled'].includes(row.state)) return false;
        const now = deps.clock.now();
        await emitEmailEvent(trx, email, 'email.delivery_delayed', envelopeData(email, [row.address], { delay }), now);
        await emailsRepo(trx).setLastEvent(email.id, 'delivery_delayed', now.toISOString());
        return true;
      });
    },
    complaint: (recipientId) => deps.recorder.recordComplaint(recipientId),
  };
}
