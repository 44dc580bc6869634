import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../storage/sql/index.js';
import { automationsRepo, type AutomationRunRow, type AutomationRunStepRow } from '../../storage/repos/index.js';
import { createTestDatabase } from '../helpers/postgres.js';

// The runs that finish together in one of the durable worker's batches are written in a few
// statements (core/automations/runner.ts finishTogether): their step records upserted at once,
// their runs finished at once. The finish answers how many were still running, so the batch can
// tell a run cancelled meanwhile and commit step by step. On SQLite and PostgreSQL.
const dir = mkdtempSync(join(tmpdir(), 'svc-run-batches-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const at = '2026-11-29T10:00:00.000Z';
const run = (id: string, status: AutomationRunRow['status']): AutomationRunRow => ({
  id, team_id: 'team-1', automation_id: 'a1', version: 1, contact_id: `c-${id}`, source_event_id: `ev-${id}`,
  event_name: 'signup', event_data: '{}', status, error: null, created_at: at, started_at: at, completed_at: null,
});
const record = (runId: string, status: AutomationRunStepRow['status'], output: string | null): AutomationRunStepRow => ({
  run_id: runId, step_key: 'wait', type: 'delay', status, output, error: null, created_at: at, started_at: at, completed_at: status === 'waiting' ? null : at,
});

async function batches(t: Test, database: Database): Promise<void> {
  const { db } = database;
  const ids = Array.from({ length: 70 }, (_, i) => `r${String(i).padStart(2, '0')}`);
  await db.insertInto('automation_runs').values([...ids.map((id) => run(id, 'running')), run('gone', 'cancelled')]).execute();
  const repo = automationsRepo(db);
  // Half of them already have the waiting record a parked delay leaves; the upsert moves those on.
  for (const id of ids.slice(0, 35)) await repo.putRunStep(record(id, 'waiting', null));
  await repo.putRunSteps(ids.map((id) => record(id, 'completed', `{"n":"${id}"}`)));
  const steps = await db.selectFrom('automation_run_steps').selectAll().where('step_key', '=', 'wait').orderBy('run_id').execute();
  t.equal(steps.length, 70, 'one record a run: the waiting ones moved on, the others inserted');
  t.ok(steps.every((s) => s.status === 'completed' && s.completed_at === at && s.output === `{"n":"${s.run_id}"}`), 'each with its own values');
  const change = { status: 'completed' as const, completed_at: '2026-11-29T10:00:01.000Z', error: null };
  t.equal(await repo.finishRuns(ids, change), 70, 'every running run finished (chunks of 256, 64, 16, 4, 1)');
  t.equal(await repo.finishRuns(['r00', 'gone'], change), 0, 'runs no longer running are not counted');
  const finished = await db.selectFrom('automation_runs').select(['id', 'status', 'completed_at']).where('id', 'in', ids).execute();
  t.ok(finished.every((r) => r.status === 'completed' && r.completed_at === change.completed_at), 'all finished alike');
  t.match(await db.selectFrom('automation_runs').selectAll().where('id', '=', 'gone').executeTakeFirst(), { status: 'cancelled', completed_at: null });
}

t.test('SQLite', async (t) => {
  const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
  t.teardown(() => database.close());
  await batches(t, database);
});

t.test('PostgreSQL', async (t) => {
  const pg = await createTestDatabase();
  const database = await openDatabase({ url: pg.url, path: '/nonexistent/svc.sqlite', synchronous: 'FULL' });
  t.teardown(async () => { await database.close(); await pg.drop(); });
  await batches(t, database);
});
