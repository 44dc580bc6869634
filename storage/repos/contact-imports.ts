import { sql } from 'kysely';
import type { Db } from '../sql/db.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { ContactImportFailureRow, ContactImportRow, ContactImportStatus } from './contact-imports-tables.js';

export type { ContactImportFailureRow, ContactImportRow, ContactImportStatus };

/** What one processed batch adds to an import's counts. */
export interface ImportCounts {
  total: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
}

/** How a batch leaves the import: still going, or finished (completed or failed) at `at`. */
export type ImportProgress =
  | { status: 'in_progress' }
  | { status: 'completed' | 'failed'; at: string; error?: string };

export interface ContactImportsRepo {
  insert(row: ContactImportRow): Promise<void>;
  byId(teamId: string, id: string): Promise<ContactImportRow | undefined>;
  /** For the worker, which knows the import only by id. */
  byIdAnyTeam(id: string): Promise<ContactImportRow | undefined>;
  list(teamId: string, status: ContactImportStatus | undefined, page: PageQuery): Promise<Page<ContactImportRow>>;
  /** Adds a batch's counts and moves the status, in the batch's transaction. */
  advance(id: string, counts: ImportCounts, progress: ImportProgress): Promise<void>;
  insertFailures(rows: readonly ContactImportFailureRow[]): Promise<void>;
  /** The kept failures, by row number. */
  failures(importId: string, limit: number): Promise<ContactImportFailureRow[]>;
  /** Imports not finished yet (queued or in progress), oldest first. */
  unfinished(limit: number): Promise<Pick<ContactImportRow, 'id' | 'team_id'>[]>;
  /** Finished before `before` with their file still on disk. */
  filesDueForDeletion(before: string, limit: number): Promise<Pick<ContactImportRow, 'id'>[]>;
  markFileDeleted(id: string, at: string): Promise<void>;
  /** Which of these ids are imports whose file has not been deleted. */
  withLiveFiles(ids: readonly string[]): Promise<Set<string>>;
}

export function contactImportsRepo(db: Db): ContactImportsRepo {
  return {
    async insert(row) {
      await db.insertInto('contact_imports').values(row).execute();
    },
    byId: (teamId, id) =>
      db.selectFrom('contact_imports').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    byIdAnyTeam: (id) => db.selectFrom('contact_imports').selectAll().where('id', '=', id).executeTakeFirst(),
    list(teamId, status, page) {
      let q = db.selectFrom('contact_imports').selectAll().where('team_id', '=', teamId);
      if (status !== undefined) q = q.where('status', '=', status);
      return paginate(db, q, 'id', page);
    },
    async advance(id, counts, progress) {
      const finished = progress.status === 'in_progress' ? {} : { completed_at: progress.at, error: progress.error ?? null };
      await db.updateTable('contact_imports').set({
        status: progress.status, ...finished,
        total: sql`total + ${counts.total}`, created: sql`created + ${counts.created}`, updated: sql`updated + ${counts.updated}`,
        skipped: sql`skipped + ${counts.skipped}`, failed: sql`failed + ${counts.failed}`,
      }).where('id', '=', id).execute();
    },
    async insertFailures(rows) {
      // A few hundred at a time: each row is four values.
      for (let i = 0; i < rows.length; i += 200) {
        await db.insertInto('contact_import_failures').values(rows.slice(i, i + 200))
          .onConflict((oc) => oc.columns(['import_id', 'row_number']).doNothing()).execute();
      }
    },
    failures: (importId, limit) =>
      db.selectFrom('contact_import_failures').selectAll().where('import_id', '=', importId).orderBy('row_number').limit(limit).execute(),
    unfinished: (limit) => db.selectFrom('contact_imports').select(['id', 'team_id'])
      .where('status', 'in', ['queued', 'in_progress']).orderBy('id').limit(limit).execute(),
    filesDueForDeletion: (before, limit) => db.selectFrom('contact_imports').select('id')
      .where('file_deleted_at', 'is', null).where('completed_at', '<', before).orderBy('completed_at').limit(limit).execute(),
    async markFileDeleted(id, at) {
      await db.updateTable('contact_imports').set({ file_deleted_at: at }).where('id', '=', id).execute();
    },
    async withLiveFiles(ids) {
      if (ids.length === 0) return new Set();
      const rows = await db.selectFrom('contact_imports').select('id').where('id', 'in', ids).where('file_deleted_at', 'is', null).execute();
      return new Set(rows.map((r) => r.id));
    },
  };
}
