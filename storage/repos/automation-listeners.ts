import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { transactionMemo } from '../sql/transaction-memo.js';

// The event names a team's automations could act on: the trigger of each live, enabled automation,
// and every exit event any version of any of its automations lists (a superset of the runs such an
// event can end: a disabled automation's runs still exit). Asked before writing an svc:email.*
// platform event and by the platform stream reader; read once per team per transaction.

const actedOn = transactionMemo(async (db, teamId): Promise<ReadonlySet<string>> => {
  const select = shapedStatement(db, 'automations.actedOn', (m) => db.selectFrom('automations').select('trigger_event as name')
    .where('team_id', '=', m('team')).where('status', '=', m('enabled') as 'enabled').where('deleted_at', 'is', null)
    .union(db.selectFrom('automation_exit_events').select('event_name as name').where('team_id', '=', m('team'))));
  const rows = (await select(db, { team: teamId, enabled: 'enabled' })).rows as { name: string }[];
  return new Set(rows.map((row) => row.name));
});

/** Whether an automation of the team starts on this event, or a run of one could exit on it, as of this transaction. */
export async function teamAutomationsActOn(db: Db, teamId: string, eventName: string): Promise<boolean> {
  return (await actedOn(db, teamId)).has(eventName);
}
