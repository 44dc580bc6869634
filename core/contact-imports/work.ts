import type { Db } from '../../storage/sql/index.js';
import { contactImportsRepo, type ContactImportRow, type ImportCounts, type ImportProgress } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import type { ConsentHasher, ContactLimitOf, TopicChoiceInput } from '../contacts/index.js';
import type { Logger } from '../logger.js';
import type { StepResult, WorkHandler } from '../work/index.js';
import { FAILURES_KEPT, writeBatch, type BatchContext } from './batch.js';
import type { BatchReader } from './batch-reader.js';
import type { ColumnPlan } from './column-map.js';
import type { SegmentMembership } from './ports.js';
import { checkRow, type CheckedRow } from './rows.js';

// An import's rows are processed by the durable worker only (core/work): one item per import
// (kind `contact-import`, key the import id). Each step reads the next batch from the byte offset
// in the item's cursor, and the batch's writes commit with the cursor moved past it, so after a
// crash the next owner resumes at the first record no commit counted: no row is counted twice,
// none is skipped. queued → in_progress at the first step; completed (or failed: a file that
// cannot be read on) at the last.

export const CONTACT_IMPORT_WORK = 'contact-import';

export interface ImportPayload {
  importId: string;
}

/** Where the next step starts: the byte offset of the next record and the rows read before it. */
export interface ImportCursor {
  offset: number;
  row: number;
}

export interface ImportWorkDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** Reads the batches' records, one ahead (batch-reader.ts); the step checks them. */
  reader: BatchReader;
  hash: ConsentHasher;
  contactLimit: ContactLimitOf;
  segments: SegmentMembership;
  /** Rows per step, and about how many bytes of them at most. */
  batchRows: number;
  batchBytes: number;
}

/** What the import row keeps of its options (JSON columns). */
export interface StoredOptions {
  plan: ColumnPlan;
  topics: TopicChoiceInput[];
  segments: string[];
}

export function storedOptions(row: ContactImportRow): StoredOptions {
  const map = JSON.parse(row.column_map) as { plan: ColumnPlan };
  return { plan: map.plan, topics: JSON.parse(row.topics) as TopicChoiceInput[], segments: JSON.parse(row.segments) as string[] };
}

export function contactImportWork(deps: ImportWorkDeps): WorkHandler<ImportPayload, ImportCursor> {
  return {
    kind: CONTACT_IMPORT_WORK,
    async step(item): Promise<StepResult<ImportCursor>> {
      const row = await contactImportsRepo(deps.db).byIdAnyTeam(item.payload.importId);
      if (!row || row.status === 'completed' || row.status === 'failed') return { kind: 'done' };
      const cursor = item.cursor ?? { offset: row.data_offset, row: 0 };
      const options = storedOptions(row);
      const batch = await deps.reader.read({ importId: row.id, offset: cursor.offset, maxRows: deps.batchRows, maxBytes: deps.batchBytes });
      const checked: CheckedRow[] = batch.records.map((record, i) => checkRow(record, cursor.row + i + 1, options.plan));
      const next = { offset: batch.nextOffset, row: cursor.row + checked.length };
      if (batch.error !== undefined) {
        checked.push({ ok: false, failure: { rowNumber: next.row + 1, email: null, reason: `The file cannot be read from this row on: ${batch.error}` } });
      }
      const limit = await deps.contactLimit(deps.db, row.team_id);
      const write = async (trx: Db) => {
        const now = deps.clock.now();
        const counts = await writeBatch(trx, batchContext(deps, row, options, limit, now), checked);
        const progress: ImportProgress = !batch.ended ? { status: 'in_progress' }
          : batch.error === undefined ? { status: 'completed', at: now.toISOString() }
            : { status: 'failed', at: now.toISOString(), error: batch.error };
        await contactImportsRepo(trx).advance(row.id, counts, progress);
        logProgress(deps.logger, row, counts, progress);
      };
      // A batch in the middle needs no fsync of its own: lost in a power cut, it is read and written
      // again from the cursor before it (nothing outside the database has seen it). The last is durable.
      return batch.ended ? { kind: 'done', cursor: next, write } : { kind: 'continue', cursor: next, write, relaxed: true };
    },
  };
}

function batchContext(deps: ImportWorkDeps, row: ContactImportRow, options: StoredOptions, limit: number, now: Date): BatchContext {
  return {
    importId: row.id, teamId: row.team_id, mode: row.on_conflict, plan: options.plan, topics: options.topics, segments: options.segments,
    consent: { source: 'import', ip: row.source_ip, userAgent: row.source_user_agent }, hash: deps.hash, limit,
    failedBefore: Math.min(row.failed, FAILURES_KEPT), segmentMembership: deps.segments, now,
  };
}

function logProgress(logger: Logger, row: ContactImportRow, counts: ImportCounts, progress: ImportProgress): void {
  const ids = { importId: row.id, teamId: row.team_id };
  if (row.status === 'queued') logger.info(ids, 'contact import started');
  if (progress.status === 'in_progress') return;
  const totals = {
    total: row.total + counts.total, created: row.created + counts.created, updated: row.updated + counts.updated,
    skipped: row.skipped + counts.skipped, failed: row.failed + counts.failed,
  };
  if (progress.status === 'completed') logger.info({ ...ids, counts: totals }, 'contact import completed');
  else logger.warn({ ...ids, counts: totals, error: progress.error }, 'contact import failed');
}
