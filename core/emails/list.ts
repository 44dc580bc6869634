import type { EmailFilter, EmailsRepo } from '../../storage/repos/index.js';
import { invalidParameter } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { listOf, parsePageQuery, parseSearch, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { parseInstant } from '../time.js';
import { emailStatuses, listItem, type EmailListItem } from './view.js';

export interface RawEmailListQuery extends RawPageQuery {
  status?: string;
  api_key_id?: string;
  start_date?: string;
  end_date?: string;
  search?: string;
  /** `name` or `name:value`, comma separated; every one must match. */
  tags?: string;
}

/** GET /emails: the dashboard's Sending list filters, newest first. */
export async function listEmails(repo: EmailsRepo, teamId: string, raw: RawEmailListQuery): Promise<ListEnvelope<EmailListItem>> {
  const page = parsePageQuery(raw);
  const filter: EmailFilter = {};
  if (raw.status !== undefined) {
    if (!(emailStatuses as readonly string[]).includes(raw.status)) throw invalidParameter('status', `The \`status\` parameter must be one of ${emailStatuses.join(', ')}.`);
    filter.status = raw.status;
  }
  if (raw.api_key_id !== undefined) {
    if (!looksLikeId(raw.api_key_id)) throw invalidParameter('api_key_id', 'The `api_key_id` parameter must be an API key id.');
    filter.apiKeyId = raw.api_key_id.toLowerCase();
  }
  if (raw.start_date !== undefined) filter.startDate = parseInstant('start_date', raw.start_date);
  if (raw.end_date !== undefined) filter.endDate = parseInstant('end_date', raw.end_date);
  if (filter.startDate && filter.endDate && filter.endDate < filter.startDate) throw invalidParameter('end_date', 'The `end_date` parameter must not be before `start_date`.');
  const search = parseSearch(raw.search);
  if (search !== undefined) filter.search = search.toLowerCase();
  if (raw.tags !== undefined) filter.tags = parseTagFilter(raw.tags);
  const result = await repo.list(teamId, filter, page);
  return listOf(result.data.map(listItem), result.has_more);
}

function parseTagFilter(raw: string): { name: string; value?: string }[] {
  const items = raw.split(',').map((s) => s.trim());
  const shape = /^[A-Za-z0-9_-]{1,256}(:[A-Za-z0-9_-]{1,256})?$/;
  if (items.length > 20 || items.some((i) => !shape.test(i))) {
    throw invalidParameter('tags', 'The `tags` parameter is a comma-separated list of `name` or `name:value` (letters, digits, _ and -).');
  }
  return items.map((i) => {
    const [name, value] = i.split(':');
    return value === undefined ? { name: name! } : { name: name!, value };
  });
}
