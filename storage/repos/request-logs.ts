import { sql } from 'kysely';
import type { Db } from '../sql/db.js';
import { compiledInsert } from '../sql/compiled.js';
import { inRelaxedWriteTransaction } from '../sql/write-transaction.js';
import type { RequestLogRow } from '../sql/tables.js';
import { inTeamScope, type TeamScope } from '../sql/team-scope.js';
import { containsPattern, paginate, type Page, type PageQuery } from '../sql/paginate.js';

export interface RequestLogFilter {
  status?: number;
  source?: string;
  excludeSource?: string;
  search?: string;
  userAgent?: string;
  startDate?: string;
  endDate?: string;
}

export type RequestLogSummary = Omit<RequestLogRow, 'request_body' | 'response_body'>;

export interface RequestLogsRepo {
  insertMany(rows: readonly RequestLogRow[]): Promise<void>;
  list(teamId: string, filter: RequestLogFilter, page: PageQuery): Promise<Page<RequestLogSummary>>;
  byId(teamId: string, id: string): Promise<RequestLogRow | undefined>;
  /** Deletes up to `batch` logs of the teams in `scope` created before `cutoff`. */
  deleteOlderThan(cutoff: string, batch: number, scope: TeamScope): Promise<number>;
}

const requestLogColumns = [
  'id', 'team_id', 'api_key_id', 'created_at', 'method', 'endpoint', 'path', 'response_status', 'user_agent', 'source',
  'request_id', 'latency_ms', 'email_id', 'request_body', 'response_body',
] as const satisfies readonly (keyof RequestLogRow)[];

export function requestLogsRepo(db: Db): RequestLogsRepo {
  const insertRow = compiledInsert<RequestLogRow>(db, 'request_logs', requestLogColumns);
  return {
    async insertMany(rows) {
      if (rows.length === 0) return;
      // One transaction for the whole batch: one fsync, however many requests it holds.
      // Single-row inserts share one statement; a multi-row insert would be new SQL per size.
      await inRelaxedWriteTransaction(db, async (trx) => {
        for (const row of rows) await insertRow(trx, row);
      });
    },
    list(teamId, filter, page) {
      let q = db.selectFrom('request_logs')
        .select(['id', 'team_id', 'api_key_id', 'created_at', 'method', 'endpoint', 'path', 'response_status',
          'user_agent', 'source', 'request_id', 'latency_ms', 'email_id'])
        .where('team_id', '=', teamId);
      if (filter.status !== undefined) q = q.where('response_status', '=', filter.status);
      if (filter.source !== undefined) q = q.where('source', '=', filter.source);
      if (filter.excludeSource !== undefined) q = q.where('source', '!=', filter.excludeSource);
      if (filter.userAgent !== undefined) q = q.where('user_agent', '=', filter.userAgent);
      if (filter.startDate !== undefined) q = q.where('created_at', '>=', filter.startDate);
      if (filter.endDate !== undefined) q = q.where('created_at', '<=', filter.endDate);
      if (filter.search !== undefined) {
        const pattern = containsPattern(filter.search);
        q = q.where(sql<boolean>`(lower(endpoint) like lower(${pattern}) escape '\\' or lower(path) like lower(${pattern}) escape '\\')`);
      }
      return paginate(db, q, 'id', page);
    },
    byId: (teamId, id) =>
      db.selectFrom('request_logs').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    async deleteOlderThan(cutoff, batch, scope) {
      // Bounded batches keep each write transaction short while the API is serving.
      const r = await db.deleteFrom('request_logs')
        .where('id', 'in', db.selectFrom('request_logs').select('id').where('created_at', '<', cutoff)
          .where((eb) => inTeamScope(eb, 'team_id', scope)).limit(batch))
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
