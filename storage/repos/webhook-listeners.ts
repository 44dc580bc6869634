import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { transactionMemo } from '../sql/transaction-memo.js';

// Which event types a team's enabled webhook endpoints subscribe to: asked before writing an event
// that only webhooks read (core/outbox), once per team per transaction.

const subscribedTypes = transactionMemo(async (db, teamId): Promise<ReadonlySet<string>> => {
  const select = shapedStatement(db, 'webhooks.subscribedTypes', (m) => db.selectFrom('webhook_endpoints').select('events')
    .where('team_id', '=', m('team')).where('status', '=', m('enabled') as 'enabled'));
  const rows = (await select(db, { team: teamId, enabled: 'enabled' })).rows as { events: string }[];
  return new Set(rows.flatMap((row) => JSON.parse(row.events) as string[]));
});

/** Whether an enabled endpoint of the team subscribes to `type`, as of this transaction. */
export async function teamListensTo(db: Db, teamId: string, type: string): Promise<boolean> {
  return (await subscribedTypes(db, teamId)).has(type);
}
