import type { Db } from '../../storage/sql/index.js';
import { customEventsRepo, eventDefinitionsRepo, type EventDefinitionRow } from '../../storage/repos/index.js';
import { groupCommit, inWriteTransaction } from '../../storage/sql/index.js';
import { isoNow, type Clock } from '../clock.js';
import { notFound, ServiceError, validationError, type FieldError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { listOf, parsePageQuery, parseSearch, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { nameProblem, schemaProblems, type EventSchema } from './names.js';
import { checkSend, resolveContact, type CheckedSend, type SendEventInput } from './send.js';

// Custom event definitions (create, list, get by id or name, PATCH replacing the schema, soft
// delete freeing the name) and POST /events/send. Enrolment is the automations area's: it is
// handed in as a port (`enrol`) and runs in the send's transaction, so an accepted event and the
// runs it starts commit together — one send, exactly one run per matching enabled automation.

/** An event as enrolment sees it: who, what, and the data templates and conditions read. */
export interface EnrollingEvent {
  teamId: string;
  name: string;
  contactId: string;
  /** The event's own id: a run per (automation, event, contact), so a redelivery enrols once. */
  sourceId: string;
  data: Record<string, unknown>;
  at: Date;
}

/** Starts the runs an event enrols (and ends the runs it exits) in the caller's transaction. */
export type Enrol = (trx: Db, event: EnrollingEvent) => Promise<number>;

export interface EventsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  enrol: Enrol;
  /** After the commit of a send that enrolled runs: the runner starts them at once, not at its next poll. */
  wakeWork: () => void;
}

export interface EventDefinitionView {
  object: 'event';
  id: string;
  name: string;
  schema: EventSchema | null;
  created_at: string;
  updated_at: string | null;
}

export type EventDefinitionItem = Omit<EventDefinitionView, 'object'>;

type Ref = { object: 'event'; id: string };

export const refuseAll = (errors: FieldError[]): ServiceError => {
  const error = validationError(422, undefined, errors[0]!.message);
  error.options.errors = errors;
  return error;
};

export function eventsService(deps: EventsDeps) {
  const repo = eventDefinitionsRepo(deps.db);
  const commits = groupCommit(deps.db);
  const record = (trx: Db, teamId: string, checked: CheckedSend, now: Date) => recordSend(deps, trx, teamId, checked, now);
  return {
    async create(teamId: string, input: { name?: unknown; schema?: unknown }): Promise<Ref> {
      const problem = nameProblem(input.name);
      if (problem) throw validationError(422, 'name', problem);
      const schema = checkSchema(input.schema);
      const at = isoNow(deps.clock);
      const row: EventDefinitionRow = { id: newId(), team_id: teamId, name: input.name as string, schema, created_at: at, updated_at: at, deleted_at: null };
      if (!(await inWriteTransaction(deps.db, (trx) => eventDefinitionsRepo(trx).insertIfAbsent(row)))) {
        throw validationError(422, 'name', `An event named \`${row.name}\` already exists.`);
      }
      deps.logger.info({ teamId, eventId: row.id }, 'event definition created');
      return { object: 'event', id: row.id };
    },

    async list(teamId: string, query: RawPageQuery & { search?: string }): Promise<ListEnvelope<EventDefinitionItem>> {
      const search = parseSearch(query.search);
      const page = await repo.list(teamId, search, parsePageQuery(query));
      return listOf(page.data.map(item), page.has_more);
    },

    async get(teamId: string, ref: string): Promise<EventDefinitionView> {
      return { object: 'event', ...item(await find(repo, teamId, ref)) };
    },

    async update(teamId: string, ref: string, input: { schema?: unknown }): Promise<Ref> {
      const row = await find(repo, teamId, ref);
      const schema = checkSchema(input.schema);
      await inWriteTransaction(deps.db, (trx) => eventDefinitionsRepo(trx).setSchema(teamId, row.id, schema, isoNow(deps.clock)));
      return { object: 'event', id: row.id };
    },

    async remove(teamId: string, ref: string): Promise<Ref & { deleted: true }> {
      const row = await find(repo, teamId, ref);
      await inWriteTransaction(deps.db, (trx) => eventDefinitionsRepo(trx).markDeleted(teamId, row.id, isoNow(deps.clock)));
      deps.logger.info({ teamId, eventId: row.id }, 'event definition deleted');
      return { object: 'event', id: row.id, deleted: true };
    },

    /** 202 `{object: 'event', event}`: the event is recorded and its runs enrolled in one transaction. */
    async send(teamId: string, input: SendEventInput): Promise<{ object: 'event'; event: string }> {
      const now = deps.clock.now();
      const checked = checkSend(input, now);
      const definition = checked.store ? undefined : await repo.byName(teamId, checked.name);
      if (!checked.store && !definition) throw notFound('Event');
      checked.checkPayload(definition?.schema ? JSON.parse(definition.schema) as EventSchema : null);
      // Sends arriving together share one transaction and its fsync (group commit); each 202 still
      // waits for its own event and runs to be on disk.
      const outcome = await commits.run((trx) => record(trx, teamId, checked, now));
      if ('refused' in outcome) throw outcome.refused;
      const enrolled = outcome.runs;
      if (enrolled > 0) deps.wakeWork();
      deps.logger.info({ teamId, event: checked.name, runs: enrolled }, 'event accepted');
      return { object: 'event', event: checked.name };
    },
  };
}

export type EventsService = ReturnType<typeof eventsService>;

/** A refusal comes back as a value, never thrown: it would roll back the sends sharing its transaction. */
type SendOutcome = { runs: number } | { refused: ServiceError };

/** One accepted send's writes: the event row, a waiting browser's events, the runs enrolled. */
async function recordSend(deps: EventsDeps, trx: Db, teamId: string, checked: CheckedSend, now: Date): Promise<SendOutcome> {
  let contactId: string | undefined;
  try {
    contactId = await resolveContact(trx, teamId, checked);
  } catch (err) {
    // Only the contact lookup refuses (404), and before this send wrote anything.
    if (err instanceof ServiceError) return { refused: err };
    throw err;
  }
  const events = customEventsRepo(trx);
  const id = newId();
  const inserted = await events.insertIfNew({
    id, team_id: teamId, name: checked.name, contact_id: contactId ?? null, anonymous_id: checked.anonymousId,
    idempotency_key: checked.idempotencyKey, payload: JSON.stringify(checked.payload), start_flows: checked.startFlows ? 1 : 0,
    occurred_at: checked.occurredAt.toISOString(), created_at: now.toISOString(),
  });
  if (!inserted) return { runs: 0 };
  let runs = 0;
  if (checked.anonymousId !== null && contactId !== undefined && checked.contactGiven) {
    await events.tieBrowser(teamId, checked.anonymousId, contactId, now.toISOString());
    for (const waiting of await events.claimWaiting(teamId, checked.anonymousId, contactId)) {
      if (waiting.id === id || waiting.start_flows !== 1) continue;
      runs += await deps.enrol(trx, { teamId, name: waiting.name, contactId, sourceId: waiting.id, data: JSON.parse(waiting.payload) as Record<string, unknown>, at: now });
    }
  }
  if (contactId !== undefined && checked.startFlows) {
    runs += await deps.enrol(trx, { teamId, name: checked.name, contactId, sourceId: id, data: checked.payload, at: now });
  }
  return { runs };
}

function checkSchema(raw: unknown): string | null {
  const errors = schemaProblems(raw);
  if (errors.length) throw refuseAll(errors);
  return raw === null || raw === undefined ? null : JSON.stringify(raw);
}

async function find(repo: ReturnType<typeof eventDefinitionsRepo>, teamId: string, ref: string): Promise<EventDefinitionRow> {
  const row = looksLikeId(ref) ? await repo.byId(teamId, ref.toLowerCase()) : await repo.byName(teamId, ref);
  if (!row) throw notFound('Event');
  return row;
}

const item = (row: EventDefinitionRow): EventDefinitionItem => ({
  id: row.id, name: row.name, schema: row.schema === null ? null : JSON.parse(row.schema) as EventSchema, created_at: row.created_at, updated_at: row.updated_at,
});
