import type { Db } from '../../storage/sql/index.js';
import { automationsRepo, type AutomationRow, type AutomationStatus, type RunStatus } from '../../storage/repos/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { invalidParameter, missingField, notFound, validationError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { cancelRuns, type GraphCache } from './lifecycle.js';
import type { TemplateSender } from './ports.js';
import { validateGraph, type CheckedGraph } from './validate.js';
import { automationItem, automationView, runItem, runView, type AutomationItem, type AutomationView, type RunItem, type RunView } from './view.js';

// Automations (spec Automation, States): create writes version 1; a PATCH with steps and
// connections writes the next version and repoints (runs keep theirs); `status` gates enrolment
// only; stop disables and cancels every live run; delete cancels them, then the automation is
// gone (404). Runs are listed and read here; they are worked by runner.ts.

export interface AutomationsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  templates: TemplateSender;
  graphs: GraphCache;
}

export interface AutomationInput {
  name?: unknown;
  status?: unknown;
  steps?: unknown;
  connections?: unknown;
}

type Ref = { object: 'automation'; id: string };

export const NAME_MAX = 200;
const runStatuses: readonly RunStatus[] = ['running', 'completed', 'failed', 'cancelled'];

export function automationsService(deps: AutomationsDeps) {
  const repo = automationsRepo(deps.db);
  const find = async (teamId: string, id: string): Promise<AutomationRow> => {
    const row = looksLikeId(id) ? await repo.byId(teamId, id.toLowerCase()) : undefined;
    if (!row) throw notFound('Automation');
    return row;
  };
  const publish = (trx: Db, automation: AutomationRow, checked: CheckedGraph, at: string) => automationsRepo(trx).insertVersion(
    { automation_id: automation.id, version: automation.version, steps: JSON.stringify(checked.graph.steps), connections: JSON.stringify(checked.graph.connections), created_at: at },
    checked.exitEvents.map((name) => ({ team_id: automation.team_id, automation_id: automation.id, version: automation.version, event_name: name })),
  );
  const endRuns = async (trx: Db, automationId: string, reason: string) =>
    cancelRuns(trx, await automationsRepo(trx).runningRunIds(automationId), deps.clock.now(), reason, deps.logger);

  return {
    async create(teamId: string, input: AutomationInput): Promise<Ref> {
      const name = checkName(input.name);
      const status = checkStatus(input.status) ?? 'disabled';
      if (input.steps === undefined) throw missingField('steps');
      if (input.connections === undefined) throw missingField('connections');
      const checked = await validateGraph(deps.db, deps.templates, teamId, input.steps, input.connections, deps.clock.now());
      const at = deps.clock.now().toISOString();
      const row: AutomationRow = { id: newId(), team_id: teamId, name, status, version: 1, trigger_event: checked.triggerEvent, created_at: at, updated_at: at, deleted_at: null };
      await inWriteTransaction(deps.db, async (trx) => {
        await automationsRepo(trx).insert(row);
        await publish(trx, row, checked, at);
      });
      deps.logger.info({ teamId, automationId: row.id, status }, 'automation created');
      return { object: 'automation', id: row.id };
    },

    async get(teamId: string, id: string): Promise<AutomationView> {
      const row = await find(teamId, id);
      return automationView(row, await deps.graphs.of(deps.db, row.id, row.version));
    },

    async list(teamId: string, query: RawPageQuery & { status?: string }): Promise<ListEnvelope<AutomationItem>> {
      if (query.status !== undefined && query.status !== 'enabled' && query.status !== 'disabled') {
        throw invalidParameter('status', 'The `status` parameter is `enabled` or `disabled`.');
      }
      const page = await repo.list(teamId, query.status as AutomationStatus | undefined, parsePageQuery(query));
      return listOf(page.data.map(automationItem), page.has_more);
    },

    async update(teamId: string, id: string, input: AutomationInput & { id?: unknown }): Promise<Ref> {
      const row = await find(teamId, id);
      if (input.id !== undefined && String(input.id).toLowerCase() !== row.id) throw invalidParameter('id', 'The `id` in the body must be the automation\'s own id.');
      const name = input.name === undefined ? undefined : checkName(input.name);
      const status = checkStatus(input.status);
      if ((input.steps === undefined) !== (input.connections === undefined)) {
        throw validationError(422, input.steps === undefined ? 'steps' : 'connections', 'A new version takes `steps` and `connections` together.');
      }
      const checked = input.steps === undefined ? undefined : await validateGraph(deps.db, deps.templates, teamId, input.steps, input.connections, deps.clock.now());
      const at = deps.clock.now().toISOString();
      await inWriteTransaction(deps.db, async (trx) => {
        const current = await automationsRepo(trx).byId(teamId, row.id);
        if (!current) throw notFound('Automation');
        const next = checked ? { ...current, version: current.version + 1, trigger_event: checked.triggerEvent } : current;
        if (checked) await publish(trx, next, checked, at);
        await automationsRepo(trx).update(teamId, row.id, {
          updated_at: at, ...(name !== undefined ? { name } : {}), ...(status !== undefined ? { status } : {}),
          ...(checked ? { version: next.version, trigger_event: next.trigger_event } : {}),
        });
        if (checked) deps.logger.info({ teamId, automationId: row.id, version: next.version }, 'automation version published');
      });
      return { object: 'automation', id: row.id };
    },

    async stop(teamId: string, id: string): Promise<{ object: 'automation'; id: string; status: 'disabled' }> {
      const row = await find(teamId, id);
      const cancelled = await inWriteTransaction(deps.db, async (trx) => {
        await automationsRepo(trx).update(teamId, row.id, { status: 'disabled', updated_at: deps.clock.now().toISOString() });
        return endRuns(trx, row.id, 'stopped');
      });
      deps.logger.info({ teamId, automationId: row.id, cancelled }, 'automation stopped');
      return { object: 'automation', id: row.id, status: 'disabled' };
    },

    async remove(teamId: string, id: string): Promise<Ref & { deleted: true }> {
      const row = await find(teamId, id);
      const cancelled = await inWriteTransaction(deps.db, async (trx) => {
        const n = await endRuns(trx, row.id, 'deleted');
        await automationsRepo(trx).markDeleted(teamId, row.id, deps.clock.now().toISOString());
        return n;
      });
      deps.logger.info({ teamId, automationId: row.id, cancelled }, 'automation deleted');
      return { object: 'automation', id: row.id, deleted: true };
    },

    /** A copy of the current version as a new, disabled automation. */
    async duplicate(teamId: string, id: string): Promise<Ref> {
      const row = await find(teamId, id);
      const graph = await deps.graphs.of(deps.db, row.id, row.version);
      return this.create(teamId, { name: `${row.name} (copy)`.slice(0, NAME_MAX), status: 'disabled', steps: graph.steps, connections: graph.connections });
    },

    async listRuns(teamId: string, automationId: string, query: RawPageQuery & { status?: string }): Promise<ListEnvelope<RunItem>> {
      const row = await find(teamId, automationId);
      const statuses = parseStatuses(query.status);
      const page = await repo.listRuns(teamId, row.id, statuses, parsePageQuery(query));
      return listOf(page.data.map(runItem), page.has_more);
    },

    async getRun(teamId: string, automationId: string, runId: string): Promise<RunView> {
      const row = await find(teamId, automationId);
      const run = looksLikeId(runId) ? await repo.run(teamId, row.id, runId.toLowerCase()) : undefined;
      if (!run) throw notFound('Automation run');
      return runView(run, await deps.graphs.of(deps.db, run.automation_id, run.version), await repo.runSteps(run.id));
    },
  };
}

export type AutomationsService = ReturnType<typeof automationsService>;

function checkName(raw: unknown): string {
  if (raw === undefined || raw === null) throw missingField('name');
  if (typeof raw !== 'string' || raw.trim() === '' || raw.length > NAME_MAX) throw validationError(422, 'name', `\`name\` is 1-${NAME_MAX} characters.`);
  return raw;
}

function checkStatus(raw: unknown): AutomationStatus | undefined {
  if (raw === undefined) return undefined;
  if (raw !== 'enabled' && raw !== 'disabled') throw validationError(422, 'status', '`status` is `enabled` or `disabled`.');
  return raw;
}

/** `status`: a comma-separated subset of the four; any other member is 422 invalid_parameter naming it. */
function parseStatuses(raw: string | undefined): RunStatus[] | undefined {
  if (raw === undefined) return undefined;
  const members = raw.split(',').map((s) => s.trim());
  const bad = members.find((m) => !(runStatuses as readonly string[]).includes(m));
  if (bad !== undefined) throw invalidParameter('status', `\`${bad}\` is no run status: use running, completed, failed or cancelled.`);
  return [...new Set(members)] as RunStatus[];
}
