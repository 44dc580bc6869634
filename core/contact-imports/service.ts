import type { Writable } from 'node:stream';
import type { ImportFiles } from '../../storage/files/index.js';
import { contactImportsRepo, contactPropertiesRepo, contactsRepo, type ContactImportStatus, type ImportConflictMode } from '../../storage/repos/index.js';
import { inWriteTransaction, type Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { checkTopicChoices, declareProperty, type ContactLimitOf, type TopicChoiceInput } from '../contacts/index.js';
import { invalidParameter, missingField, notFound, validationError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { topicsRepo } from '../topics/index.js';
import type { DurableWorker } from '../work/index.js';
import { FAILURES_KEPT } from './batch.js';
import { defaultColumnMap, parseColumnMap, parseJsonField, resolveColumnMap, type ColumnMap, type ColumnPlan } from './column-map.js';
import { readHeader, UnreadableCsv, type Header } from './csv.js';
import type { SegmentMembership } from './ports.js';
import { contactImportView, failureView, type ContactImportFailure, type ContactImportView } from './view.js';
import { CONTACT_IMPORT_WORK, type ImportPayload } from './work.js';

// POST /contacts/imports and its reads. The upload's bytes go to a file under the data folder as
// they arrive (the HTTP layer streams them there and stops at 50 MB); then the fields are
// checked, the header is read to check the column map against it, and the import row commits
// (with any property the map declares by type). The rows are the durable worker's (work.ts).
// The import row is the upload's audit entry: who (the key), when, from where, with which options.

/** The most a CSV file may be (spec Limits). */
export const IMPORT_FILE_MAX_BYTES = 50 * 1024 * 1024;

export const importStatuses: readonly ContactImportStatus[] = ['queued', 'in_progress', 'completed', 'failed'];

/** The multipart fields besides the file, as sent (JSON text where the spec says JSON). */
export interface ImportFields {
  column_map?: string;
  on_conflict?: string;
  segments?: string;
  topics?: string;
}

/** An upload's file while it streams in; the import owns it once created, else it is discarded. */
export interface ImportUpload {
  id: string;
  stream: Writable;
  /** Waits for the last byte, fsyncs, answers the size. */
  finish(): Promise<number>;
  discard(): Promise<void>;
}

/** Who uploaded: the import keeps it (its audit entry) and its consent records carry ip and user agent. */
export interface ImportOrigin {
  apiKeyId: string | null;
  ip: string | null;
  userAgent: string | null;
  fileName: string | null;
}

export interface ContactImportsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  files: ImportFiles;
  work: Pick<DurableWorker, 'enqueue'>;
  contactLimit: ContactLimitOf;
  segments: SegmentMembership;
}

interface CheckedOptions {
  map: ColumnMap | undefined;
  mode: ImportConflictMode;
  segments: string[];
  topics: TopicChoiceInput[];
}

export interface ListImportsQuery extends RawPageQuery {
  status?: string;
}

export function contactImportsService(deps: ContactImportsDeps) {
  const repo = contactImportsRepo(deps.db);
  const find = async (teamId: string, id: string) => {
    const row = looksLikeId(id) ? await repo.byId(teamId, id.toLowerCase()) : undefined;
    if (!row) throw notFound('Contact import');
    return row;
  };
  return {
    async startUpload(): Promise<ImportUpload> {
      const id = newId();
      return { id, ...(await deps.files.create(id)) };
    },

    /** 201 `{object, id}`; any refusal discards the upload's file. */
    async create(teamId: string, upload: ImportUpload | undefined, fields: ImportFields, origin: ImportOrigin): Promise<{ object: 'contact_import'; id: string }> {
      if (!upload) throw missingField('file');
      try {
        const options = checkOptions(fields);
        const bytes = await upload.finish();
        const header = await headerOf(deps.files, upload.id, bytes);
        await checkReferences(deps, teamId, options);
        await createImport(deps, teamId, upload.id, { options, header, bytes, origin });
      } catch (err) {
        await upload.discard();
        throw err;
      }
      await enqueue(deps, upload.id, teamId);
      return { object: 'contact_import', id: upload.id };
    },

    async list(teamId: string, query: ListImportsQuery): Promise<ListEnvelope<ContactImportView>> {
      const page = parsePageQuery(query);
      const status = query.status;
      if (status !== undefined && !importStatuses.includes(status as ContactImportStatus)) {
        throw invalidParameter('status', `The \`status\` parameter must be one of ${importStatuses.join(', ')}.`);
      }
      const result = await repo.list(teamId, status as ContactImportStatus | undefined, page);
      return listOf(result.data.map(contactImportView), result.has_more);
    },

    get: async (teamId: string, id: string): Promise<ContactImportView> => contactImportView(await find(teamId, id)),

    /** The kept failures (the first thousand), by row number. */
    async failures(teamId: string, id: string): Promise<ListEnvelope<ContactImportFailure>> {
      const row = await find(teamId, id);
      return listOf((await repo.failures(row.id, FAILURES_KEPT)).map(failureView), false);
    },

    /**
     * Enqueues the work of every unfinished import again (idempotent: one item per import). For
     * an import whose row committed but whose enqueue did not (a crash in between).
     */
    async resumeUnfinished(): Promise<number> {
      const rows = await repo.unfinished(10_000);
      for (const row of rows) await deps.work.enqueue(CONTACT_IMPORT_WORK, row.id, { importId: row.id } satisfies ImportPayload, { teamId: row.team_id });
      return rows.length;
    },
  };
}

export type ContactImportsService = ReturnType<typeof contactImportsService>;

function checkOptions(fields: ImportFields): CheckedOptions {
  const mode = fields.on_conflict ?? 'skip';
  if (mode !== 'upsert' && mode !== 'skip') throw validationError(422, 'on_conflict', '`on_conflict` must be `upsert` or `skip`.');
  return { map: parseColumnMap(fields.column_map), mode, segments: parseSegments(fields.segments), topics: parseTopics(fields.topics) };
}

function parseSegments(text: string | undefined): string[] {
  if (text === undefined) return [];
  const value = parseJsonField(text, 'segments');
  if (!Array.isArray(value)) throw validationError(422, 'segments', '`segments` must be a JSON array of `{id}`.');
  return value.map((entry: unknown, i) => {
    const id = (entry as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || !looksLikeId(id)) throw validationError(422, `segments[${i}].id`, `\`segments[${i}].id\` must be a segment id.`);
    return id.toLowerCase();
  });
}

function parseTopics(text: string | undefined): TopicChoiceInput[] {
  if (text === undefined) return [];
  const value = parseJsonField(text, 'topics');
  if (!Array.isArray(value)) throw validationError(422, 'topics', '`topics` must be a JSON array of `{id, subscription}`.');
  value.forEach((entry: unknown, i) => {
    const choice = entry as { id?: unknown; subscription?: unknown } | null;
    if (typeof choice?.id !== 'string') throw validationError(422, `topics[${i}].id`, `\`topics[${i}].id\` must be a topic id.`);
    if (choice.subscription !== 'opt_in' && choice.subscription !== 'opt_out') {
      throw validationError(422, `topics[${i}].subscription`, `\`topics[${i}].subscription\` must be \`opt_in\` or \`opt_out\`.`);
    }
  });
  return checkTopicChoices(value as TopicChoiceInput[]);
}

async function headerOf(files: ImportFiles, id: string, bytes: number): Promise<Header> {
  if (bytes === 0) throw validationError(422, 'file', 'The file is empty.');
  let header: Header | undefined;
  try {
    header = await readHeader(files.read(id, 0));
  } catch (err) {
    if (!(err instanceof UnreadableCsv)) throw err;
    throw validationError(422, 'file', `The file's header cannot be read as CSV: ${err.message}`);
  }
  if (!header) throw validationError(422, 'file', 'The file has no header row.');
  return header;
}

/** Topics must be live topics of the team and segments live segments; the team must be under its contact limit. */
async function checkReferences(deps: ContactImportsDeps, teamId: string, options: CheckedOptions): Promise<void> {
  const live = new Set((await topicsRepo(deps.db).byIds(teamId, options.topics.map((t) => t.id))).map((t) => t.id));
  options.topics.forEach((t, i) => {
    if (!live.has(t.id)) throw validationError(422, `topics[${i}].id`, `Topic \`${t.id}\` not found.`);
  });
  const missing = new Set(options.segments.length ? await deps.segments.missing(teamId, options.segments) : []);
  options.segments.forEach((id, i) => {
    if (missing.has(id)) throw validationError(422, `segments[${i}].id`, `Segment \`${id}\` not found.`);
  });
  // Rule 7: past the limit an import is refused; rows past it during the import are failed.
  const limit = await deps.contactLimit(deps.db, teamId);
  if (limit > 0 && (await contactsRepo(deps.db).countCounted(teamId)) >= limit) throw validationError(422, undefined, 'Contact limit reached.');
}

interface NewImport {
  options: CheckedOptions;
  header: Header;
  bytes: number;
  origin: ImportOrigin;
}

/** The import row, with the properties the map declares by type, in one transaction. */
async function createImport(deps: ContactImportsDeps, teamId: string, id: string, input: NewImport): Promise<void> {
  const { options, header, origin } = input;
  const map = options.map ?? defaultColumnMap(header.columns);
  const at = deps.clock.now().toISOString();
  await inWriteTransaction(deps.db, async (trx) => {
    const declared = await contactPropertiesRepo(trx).byKeys(teamId, map.properties.map((p) => p.key));
    const plan: ColumnPlan = resolveColumnMap(map, header.columns, new Map(declared.map((d) => [d.key_fold, d])));
    const known = new Set(declared.map((d) => d.key_fold));
    for (const p of plan.properties) {
      if (!known.has(p.key.toLowerCase())) await declareProperty(trx, teamId, p.key, p.type, null, at);
    }
    await contactImportsRepo(trx).insert({
      id, team_id: teamId, status: 'queued', created_at: at, completed_at: null, total: 0, created: 0, updated: 0, skipped: 0, failed: 0,
      on_conflict: options.mode, column_map: JSON.stringify({ given: options.map ?? null, plan }), segments: JSON.stringify(options.segments),
      topics: JSON.stringify(options.topics), file_name: origin.fileName?.slice(0, 255) ?? null, file_bytes: input.bytes,
      data_offset: header.dataOffset, file_deleted_at: null, created_by: origin.apiKeyId,
      source_ip: origin.ip?.slice(0, 64) ?? null, source_user_agent: origin.userAgent?.slice(0, 512) ?? null, error: null,
    });
  });
  deps.logger.info({ importId: id, teamId, bytes: input.bytes, onConflict: options.mode, apiKeyId: origin.apiKeyId }, 'contact import created');
}

/** After the commit: a failure here leaves a queued import that resumeUnfinished enqueues later. */
async function enqueue(deps: ContactImportsDeps, id: string, teamId: string): Promise<void> {
  try {
    await deps.work.enqueue(CONTACT_IMPORT_WORK, id, { importId: id } satisfies ImportPayload, { teamId });
  } catch (err) {
    deps.logger.error({ err, importId: id, teamId }, 'contact import not enqueued; the jobs role enqueues it again');
  }
}
