import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../storage/sql/index.js';
import { automationsRepo, type AutomationRunRow } from '../../storage/repos/index.js';
import { createTestDatabase } from '../helpers/postgres.js';

// Two reads of a contact's runs that every event may make, neither growing with the contact's
// history. The exit check: runs of this contact, still running, whose own version lists the
// event, read from the exit events of that name (usually none). The last entry (a trigger's
// `reentry_after`): the newest run's time, the first entry of the index read backwards
// (migration 035). On SQLite and PostgreSQL.
const dir = mkdtempSync(join(tmpdir(), 'svc-runs-exiting-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const run = (id: string, automationId: string, version: number, contactId: string, status: AutomationRunRow['status']): AutomationRunRow => ({
  id, team_id: 'team-1', automation_id: automationId, version, contact_id: contactId, source_event_id: `ev-${id}`,
  event_name: 'signup', event_data: '{}', status, error: null, created_at: '2026-11-29T00:00:00.000Z', started_at: null, completed_at: null,
});

async function exiting(t: Test, database: Database): Promise<void> {
  const { db } = database;
  await db.insertInto('automation_exit_events').values([
    { team_id: 'team-1', automation_id: 'a1', version: 1, event_name: 'order.placed' },
    { team_id: 'team-1', automation_id: 'a2', version: 2, event_name: 'order.placed' },
    { team_id: 'team-2', automation_id: 'a3', version: 1, event_name: 'order.placed' },
  ]).execute();
  const rows = [
    run('r1', 'a1', 1, 'ann', 'running'), // exits
    run('r2', 'a1', 1, 'ann', 'completed'), // finished
    run('r3', 'a2', 1, 'ann', 'running'), // its version 1 lists no exit; version 2 does
    run('r4', 'a2', 2, 'ann', 'running'), // exits
    run('r5', 'a1', 1, 'bob', 'running'), // another contact
    run('r6', 'a4', 1, 'ann', 'running'), // an automation without exits
  ];
  for (let i = 0; i < 200; i++) rows.push(run(`old-${i}`, 'a4', 1, 'ann', 'completed'));
  await db.insertInto('automation_runs').values(rows).execute();
  const repo = automationsRepo(db);
  t.same((await repo.runsExitingOn('team-1', 'ann', 'order.placed')).map((r) => r.id).sort(), ['r1', 'r4']);
  t.same((await repo.runsExitingOn('team-1', 'bob', 'order.placed')).map((r) => r.id), ['r5']);
  t.same(await repo.runsExitingOn('team-1', 'ann', 'order.paid'), [], 'no automation exits on it');
  t.same(await repo.runsExitingOn('team-2', 'ann', 'order.placed'), [], "another team's exit events do not count");
  await db.updateTable('automation_runs').set({ created_at: '2026-11-20T08:00:00.000Z' }).where('id', '=', 'old-7').execute();
  await db.updateTable('automation_runs').set({ created_at: '2026-12-01T08:00:00.000Z' }).where('id', '=', 'old-3').execute();
  t.equal(await repo.lastEntry('team-1', 'a4', 'ann'), '2026-12-01T08:00:00.000Z', 'the newest entry, whatever the insertion order');
  t.equal(await repo.lastEntry('team-1', 'a4', 'bob'), undefined, 'never entered');
}

// The statement's shape (storage/repos/automations.ts runsExitingOn), for SQLite's plan.
const shape = sql`select r.* from automation_exit_events as x cross join automation_runs as r
  where x.team_id = 'team-1' and x.event_name = 'order.placed' and r.team_id = 'team-1' and r.contact_id = 'ann'
  and r.automation_id = x.automation_id and r.version = x.version and r.status = 'running'`;

t.test('SQLite', async (t) => {
  const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
  t.teardown(() => database.close());
  await exiting(t, database);
  const plan = (await sql<{ detail: string }>`explain query plan ${shape}`.execute(database.db)).rows.map((p) => p.detail);
  t.match(plan[0], /automation_exit_events_name/, `the exit events of the name first: ${plan.join(' | ')}`);
  t.match(plan[1], /automation_runs_contact_entered \(team_id=\? AND contact_id=\? AND automation_id=\?\)/, 'then the contact\'s runs in each such automation');
  const last = (await sql<{ detail: string }>`explain query plan select created_at from automation_runs
    where team_id = 'team-1' and contact_id = 'ann' and automation_id = 'a4' order by created_at desc limit 1`.execute(database.db)).rows.map((p) => p.detail);
  t.match(last.join(' | '), /automation_runs_contact_entered/, 'the last entry through the index');
  t.notMatch(last.join(' | '), /TEMP B-TREE/, `without sorting the contact's runs: ${last.join(' | ')}`);
});

t.test('PostgreSQL', async (t) => {
  const pg = await createTestDatabase();
  const database = await openDatabase({ url: pg.url, path: '/nonexistent/svc.sqlite', synchronous: 'FULL' });
  t.teardown(async () => { await database.close(); await pg.drop(); });
  await exiting(t, database);
});
