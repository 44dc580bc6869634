import type { RequestLogsRepo, RequestLogSummary } from '../../storage/repos/index.js';
import type { RequestLogRow } from '../../storage/sql/index.js';
import { invalidParameter, notFound } from '../errors.js';
import { listOf, parsePageQuery, parseSearch, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { parseInstant } from '../time.js';

export interface ListLogsQuery extends RawPageQuery {
  status?: string;
  source?: string;
  exclude_source?: string;
  search?: string;
  user_agent?: string;
  start_date?: string;
  end_date?: string;
}

export interface LogView {
  object: 'log';
  id: string;
  created_at: string;
  endpoint: string;
  method: string;
  response_status: number;
  user_agent: string | null;
  source: string;
  request_id: string;
  latency_ms: number;
  api_key_id: string | null;
  email_id?: string;
}

export interface LogDetailView extends LogView {
  request_body: unknown;
  response_body: unknown;
}

export function requestLogsService(repo: RequestLogsRepo) {
  return {
    async list(teamId: string, query: ListLogsQuery): Promise<ListEnvelope<LogView>> {
      const page = parsePageQuery(query);
      const startDate = query.start_date === undefined ? undefined : parseInstant('start_date', query.start_date);
      const endDate = query.end_date === undefined ? undefined : parseInstant('end_date', query.end_date);
      if (startDate && endDate && endDate < startDate) throw invalidParameter('end_date', 'The `end_date` must not be before `start_date`.');
      const result = await repo.list(teamId, {
        status: parseStatus(query.status),
        source: nonBlank('source', query.source),
        excludeSource: nonBlank('exclude_source', query.exclude_source),
        search: parseSearch(query.search),
        userAgent: nonBlank('user_agent', query.user_agent),
        startDate, endDate,
      }, page);
      return listOf(result.data.map(toView), result.has_more);
    },

    async get(teamId: string, id: string): Promise<LogDetailView> {
      const row = await repo.byId(teamId, id.toLowerCase());
      if (!row) throw notFound('Log');
      return { ...toView(row), request_body: parseStored(row.request_body), response_body: parseStored(row.response_body) };
    },
  };
}

export type RequestLogsService = ReturnType<typeof requestLogsService>;

function toView(row: RequestLogSummary | RequestLogRow): LogView {
  const view: LogView = {
    object: 'log', id: row.id, created_at: row.created_at, endpoint: row.path, method: row.method,
    response_status: row.response_status, user_agent: row.user_agent, source: row.source,
    request_id: row.request_id, latency_ms: row.latency_ms, api_key_id: row.api_key_id,
  };
  if (row.email_id) view.email_id = row.email_id;
  return view;
}

function parseStatus(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-5]\d\d$/.test(raw)) throw invalidParameter('status', 'The `status` parameter must be an HTTP status code.');
  return Number(raw);
}

function nonBlank(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === '') throw invalidParameter(name, `The \`${name}\` parameter must not be blank.`);
  return raw;
}

const parseStored = (text: string | null): unknown => (text === null ? null : JSON.parse(text));
