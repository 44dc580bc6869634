import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { transactionMemo } from '../sql/transaction-memo.js';

// Who listens for an event, asked before writing one that only they read (core/outbox): a team's
// set of names, read by one compiled statement once per team per transaction, so a group commit
// of many writes asks once.

/** A membership test over a team's names, each team's set read once per transaction. */
function teamNames(read: (db: Db, teamId: string) => Promise<string[]>) {
  const names = transactionMemo(async (db, teamId): Promise<ReadonlySet<string>> => new Set(await read(db as Db, teamId)));
  return async (db: Db, teamId: string, name: string): Promise<boolean> => (await names(db, teamId)).has(name);
}

/** Whether an enabled webhook endpoint of the team subscribes to `type`, as of this transaction. */
export const teamListensTo = teamNames(async (db, teamId) => {
  const select = shapedStatement(db, 'webhooks.subscribedTypes', (m) => db.selectFrom('webhook_endpoints').select('events')
    .where('team_id', '=', m('team')).where('status', '=', m('enabled') as 'enabled'));
  const rows = (await select(db, { team: teamId, enabled: 'enabled' })).rows as { events: string }[];
  return rows.flatMap((row) => JSON.parse(row.events) as string[]);
});

/**
 * Whether an automation of the team starts on this event, or a run of one could exit on it, as of
 * this transaction: the trigger of each live, enabled automation, and every exit event any version
 * of any of its automations lists (a superset of the runs such an event can end: a disabled
 * automation's runs still exit). Asked before writing an svc:email.* platform event and by the
 * platform stream reader.
 */
export const teamAutomationsActOn = teamNames(async (db, teamId) => {
  const select = shapedStatement(db, 'automations.actedOn', (m) => db.selectFrom('automations').select('trigger_event as name')
    .where('team_id', '=', m('team')).where('status', '=', m('enabled') as 'enabled').where('deleted_at', 'is', null)
    .union(db.selectFrom('automation_exit_events').select('event_name as name').where('team_id', '=', m('team'))));
  return ((await select(db, { team: teamId, enabled: 'enabled' })).rows as { name: string }[]).map((row) => row.name);
});
