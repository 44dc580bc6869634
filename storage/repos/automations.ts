import type { Db } from '../sql/db.js';
import { shapedStatement } from '../sql/compiled.js';
import { runChunked, valuesOf } from '../sql/chunked.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type {
  AutomationExitEventRow, AutomationRow, AutomationRunRow, AutomationRunStepRow, AutomationStatus, AutomationVersionRow, RunStatus,
} from './automations-tables.js';
import type { PlatformEventRow } from './contacts-tables.js';

// Automations, their versions and runs (migration 022), and the read of the platform event stream
// enrolment makes across teams.

export type AutomationChange = Partial<Pick<AutomationRow, 'name' | 'status' | 'version' | 'trigger_event'>> & { updated_at: string };
export type RunChange = Partial<Pick<AutomationRunRow, 'status' | 'error' | 'started_at' | 'completed_at'>>;

export interface AutomationsRepo {
  insert(row: AutomationRow): Promise<void>;
  insertVersion(row: AutomationVersionRow, exitEvents: readonly AutomationExitEventRow[]): Promise<void>;
  /** A live automation. */
  byId(teamId: string, id: string): Promise<AutomationRow | undefined>;
  list(teamId: string, status: AutomationStatus | undefined, page: PageQuery): Promise<Page<AutomationRow>>;
  update(teamId: string, id: string, change: AutomationChange): Promise<void>;
  markDeleted(teamId: string, id: string, at: string): Promise<boolean>;
  version(automationId: string, version: number): Promise<AutomationVersionRow | undefined>;
  /** Live, enabled automations of the team whose current trigger is this event. */
  enabledByTrigger(teamId: string, eventName: string): Promise<AutomationRow[]>;
  /** Running runs of the contact whose version lists this event among its exit events. */
  runsExitingOn(teamId: string, contactId: string, eventName: string): Promise<AutomationRunRow[]>;
  /** Inserts unless the automation already has a run for this event and contact; answers whether it inserted. */
  insertRunIfNew(row: AutomationRunRow): Promise<boolean>;
  /** When the contact last entered the automation. */
  lastEntry(teamId: string, automationId: string, contactId: string): Promise<string | undefined>;
  runById(id: string): Promise<AutomationRunRow | undefined>;
  runsByIds(ids: readonly string[]): Promise<AutomationRunRow[]>;
  run(teamId: string, automationId: string, runId: string): Promise<AutomationRunRow | undefined>;
  listRuns(teamId: string, automationId: string, statuses: readonly RunStatus[] | undefined, page: PageQuery): Promise<Page<AutomationRunRow>>;
  /** Ids of the automation's running runs. */
  runningRunIds(automationId: string): Promise<string[]>;
  /** Moves a run that is still running; answers whether it was. */
  finishRun(id: string, change: RunChange): Promise<boolean>;
  setRun(id: string, change: RunChange): Promise<void>;
  runSteps(runId: string): Promise<AutomationRunStepRow[]>;
  /** Records a step's state (inserted, or the existing record moved on). */
  putRunStep(row: AutomationRunStepRow): Promise<void>;
  /** putRunStep for many steps, in a few statements. */
  putRunSteps(rows: readonly AutomationRunStepRow[]): Promise<void>;
  /** finishRun for many runs alike, in a few statements; answers how many were still running. */
  finishRuns(ids: readonly string[], change: Required<Pick<RunChange, 'status' | 'completed_at' | 'error'>>): Promise<number>;
  /** Platform events of every team after `afterId` and before `beforeId`, oldest first. */
  platformEvents(afterId: string | null, beforeId: string, limit: number): Promise<PlatformEventRow[]>;
}

export function automationsRepo(db: Db): AutomationsRepo {
  const live = () => db.selectFrom('automations').selectAll().where('deleted_at', 'is', null);
  return {
    async insert(row) {
      await db.insertInto('automations').values(row).execute();
    },
    async insertVersion(row, exitEvents) {
      await db.insertInto('automation_versions').values(row).execute();
      if (exitEvents.length) await db.insertInto('automation_exit_events').values([...exitEvents]).execute();
    },
    byId: (teamId, id) => live().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    list(teamId, status, page) {
      let q = live().where('team_id', '=', teamId);
      if (status !== undefined) q = q.where('status', '=', status);
      return paginate(db, q, 'id', page);
    },
    async update(teamId, id, change) {
      await db.updateTable('automations').set(change).where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).execute();
    },
    async markDeleted(teamId, id, at) {
      const r = await db.updateTable('automations').set({ deleted_at: at, updated_at: at, status: 'disabled' })
        .where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    version: (automationId, version) => db.selectFrom('automation_versions').selectAll()
      .where('automation_id', '=', automationId).where('version', '=', version).executeTakeFirst(),
    // This, runsExitingOn and insertRunIfNew run for every event sent: compiled once.
    async enabledByTrigger(teamId, eventName) {
      const select = shapedStatement(db, 'automations.enabledByTrigger', (m) => live().where('team_id', '=', m('team')).where('trigger_event', '=', m('event'))
        .where('status', '=', m('enabled') as 'enabled').orderBy('id'));
      return (await select(db, { team: teamId, event: eventName, enabled: 'enabled' })).rows as AutomationRow[];
    },
    async runsExitingOn(teamId, contactId, eventName) {
      // Every event sent asks this. From the exit events named so (usually none) to the contact's
      // runs in each such automation: SQLite, left to choose, read every run the contact ever had
      // (any status, any automation) first, so each event cost more as a contact's history grew.
      // CROSS JOIN keeps that order on SQLite; PostgreSQL plans it by its statistics.
      const select = shapedStatement(db, 'automations.runsExitingOn', (m) => db.selectFrom('automation_exit_events as x')
        .crossJoin('automation_runs as r')
        .selectAll('r').where('x.team_id', '=', m('team')).where('x.event_name', '=', m('event'))
        .where('r.team_id', '=', m('team')).where('r.contact_id', '=', m('contact')).whereRef('r.automation_id', '=', 'x.automation_id')
        .whereRef('r.version', '=', 'x.version').where('r.status', '=', m('running') as RunStatus));
      return (await select(db, { team: teamId, contact: contactId, running: 'running', event: eventName })).rows as AutomationRunRow[];
    },
    async insertRunIfNew(row) {
      const columns = Object.keys(row) as (keyof AutomationRunRow)[];
      const insert = shapedStatement(db, `automations.insertRunIfNew|${columns.join(',')}`, (m) => db.insertInto('automation_runs')
        .values(Object.fromEntries(columns.map((c) => [c, m(c)])) as unknown as AutomationRunRow)
        .onConflict((oc) => oc.columns(['automation_id', 'source_event_id', 'contact_id']).doNothing()));
      return ((await insert(db, row as unknown as Record<string, unknown>)).numAffectedRows ?? 0n) > 0n;
    },
    async lastEntry(teamId, automationId, contactId) {
      const row = await db.selectFrom('automation_runs').select('created_at').where('team_id', '=', teamId).where('contact_id', '=', contactId)
        .where('automation_id', '=', automationId).orderBy('created_at', 'desc').limit(1).executeTakeFirst();
      return row?.created_at;
    },
    // The runner reads, records and finishes a run at every step: these three are compiled once.
    async runById(id) {
      const select = shapedStatement(db, 'automations.runById', (m) => db.selectFrom('automation_runs').selectAll().where('id', '=', m('id')));
      return (await select(db, { id })).rows[0] as AutomationRunRow | undefined;
    },
    runsByIds: async (ids) => (ids.length === 0 ? [] : db.selectFrom('automation_runs').selectAll().where('id', 'in', [...ids]).execute()),
    run: (teamId, automationId, runId) => db.selectFrom('automation_runs').selectAll()
      .where('team_id', '=', teamId).where('automation_id', '=', automationId).where('id', '=', runId).executeTakeFirst(),
    listRuns(teamId, automationId, statuses, page) {
      let q = db.selectFrom('automation_runs').selectAll().where('team_id', '=', teamId).where('automation_id', '=', automationId);
      if (statuses !== undefined) q = q.where('status', 'in', [...statuses]);
      return paginate(db, q, 'id', page);
    },
    runningRunIds: async (automationId) => (await db.selectFrom('automation_runs').select('id')
      .where('automation_id', '=', automationId).where('status', '=', 'running').execute()).map((r) => r.id),
    async finishRun(id, change) {
      const columns = (Object.keys(change) as (keyof RunChange)[]).filter((c) => change[c] !== undefined).sort();
      const update = shapedStatement(db, `automations.finishRun|${columns.join(',')}`, (m) => db.updateTable('automation_runs')
        .set(Object.fromEntries(columns.map((c) => [c, m(c)]))).where('id', '=', m('id')).where('status', '=', m('running') as RunStatus));
      const values: Record<string, unknown> = { id, running: 'running' };
      for (const c of columns) values[c] = change[c];
      return ((await update(db, values)).numAffectedRows ?? 0n) > 0n;
    },
    async setRun(id, change) {
      await db.updateTable('automation_runs').set(change).where('id', '=', id).execute();
    },
    runSteps: (runId) => db.selectFrom('automation_run_steps').selectAll().where('run_id', '=', runId).execute(),
    async putRunStep(row) {
      const columns = Object.keys(row) as (keyof AutomationRunStepRow)[];
      const upsert = shapedStatement(db, `automations.putRunStep|${columns.join(',')}`, (m) => db.insertInto('automation_run_steps')
        .values(Object.fromEntries(columns.map((c) => [c, m(c)])) as unknown as AutomationRunStepRow)
        .onConflict((oc) => oc.columns(['run_id', 'step_key']).doUpdateSet((eb) => ({
          status: eb.ref('excluded.status'), output: eb.ref('excluded.output'), error: eb.ref('excluded.error'), completed_at: eb.ref('excluded.completed_at'),
        }))));
      await upsert(db, row as unknown as Record<string, unknown>);
    },
    async putRunSteps(rows) {
      if (rows.length === 0) return;
      const columns = Object.keys(rows[0]!) as (keyof AutomationRunStepRow)[];
      await runChunked(db, `automations.putRunSteps|${columns.join(',')}`, rows, (m, size) => db.insertInto('automation_run_steps')
        .values(valuesOf(m, columns, size) as unknown as AutomationRunStepRow[])
        .onConflict((oc) => oc.columns(['run_id', 'step_key']).doUpdateSet((eb) => ({
          status: eb.ref('excluded.status'), output: eb.ref('excluded.output'), error: eb.ref('excluded.error'), completed_at: eb.ref('excluded.completed_at'),
        }))), {}, runStepChunks);
    },
    async finishRuns(ids, change) {
      const moved = await runChunked(db, 'automations.finishRuns', ids.map((id) => ({ id })), (m, size) => db.updateTable('automation_runs')
        .set({ status: m('-1:status') as RunStatus, completed_at: m('-1:completed_at'), error: m('-1:error') })
        .where('id', 'in', Array.from({ length: size }, (_, i) => m(`${i}:id`))).where('status', '=', m('-1:running') as RunStatus)
        .returning('id'), { ...change, running: 'running' });
      return moved.length;
    },
    platformEvents(afterId, beforeId, limit) {
      let q = db.selectFrom('platform_events').selectAll().where('id', '<', beforeId);
      if (afterId !== null) q = q.where('id', '>', afterId);
      return q.orderBy('id').limit(limit).execute();
    },
  };
}

/** Chunk sizes of the step records' upsert: 9 columns a row, under 999 bound values a statement. */
const runStepChunks = [64, 16, 4, 1];
