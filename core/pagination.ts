import type { PageQuery } from '../storage/sql/index.js';
import { invalidParameter, ServiceError } from './errors.js';
import { looksLikeId } from './ids.js';

export interface RawPageQuery {
  limit?: string;
  after?: string;
  before?: string;
}

/** limit 1-100 (default 20); `after` xor `before`, each an item id. */
export function parsePageQuery(raw: RawPageQuery): PageQuery {
  const page: PageQuery = { limit: 20 };
  if (raw.limit !== undefined) {
    const limit = /^\d+$/.test(raw.limit) ? Number(raw.limit) : NaN;
    if (!(limit >= 1 && limit <= 100)) throw invalidParameter('limit', 'The `limit` parameter must be an integer between 1 and 100.');
    page.limit = limit;
  }
  if (raw.after !== undefined && raw.before !== undefined) {
    throw new ServiceError(422, 'invalid_parameter', 'The `after` and `before` parameters cannot be used together.');
  }
  for (const name of ['after', 'before'] as const) {
    const cursor = raw[name];
    if (cursor === undefined) continue;
    if (!looksLikeId(cursor)) throw invalidParameter(name, `The \`${name}\` parameter must be an item id.`);
    page[name] = cursor.toLowerCase();
  }
  return page;
}

export interface ListEnvelope<T> {
  object: 'list';
  has_more: boolean;
  data: T[];
}

export const listOf = <T>(data: T[], has_more: boolean): ListEnvelope<T> => ({ object: 'list', has_more, data });

/** Free-text search: 1-200 characters, not blank. */
export function parseSearch(raw: string | undefined, name = 'search'): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === '' || raw.length > 200) throw invalidParameter(name, `The \`${name}\` parameter must be 1-200 characters and not blank.`);
  return raw;
}
