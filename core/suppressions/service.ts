import type { Db } from '../../storage/sql/index.js';
import { suppressionsRepo, type SuppressionOrigin, type SuppressionRow, type SuppressionsRepo } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { invalidParameter, missingField, notFound, validationError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { listOf, parsePageQuery, parseSearch, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { parseInstant } from '../time.js';
import { addSuppression, removeSuppression, suppressionKey } from './suppress.js';

export const suppressionOrigins: readonly SuppressionOrigin[] = ['bounce', 'complaint', 'manual', 'unsubscribe'];

/** Largest `emails` / `ids` array of one batch call. */
export const SUPPRESSION_BATCH_MAX = 100;

export interface SuppressionView {
  object: 'suppression';
  id: string;
  email: string;
  origin: SuppressionOrigin;
  source_id: string | null;
  created_at: string;
}

export interface ListSuppressionsQuery extends RawPageQuery {
  origin?: string;
  search?: string;
  start_date?: string;
  end_date?: string;
}

export interface BatchRemoveInput {
  emails?: string[];
  ids?: string[];
}

export interface SuppressionsDeps {
  db: Db;
  clock: Clock;
}

type Ref = { object: 'suppression'; id: string };

export function suppressionsService(deps: SuppressionsDeps) {
  const repo = suppressionsRepo(deps.db);
  return {
    /** Manual add. An address already suppressed answers its existing record's id. */
    async add(teamId: string, email: string | undefined): Promise<Ref> {
      const address = checkAddress(email, 'email');
      const added = await inTransaction(deps.db, (trx) => addSuppression(trx, teamId, address, 'manual', null, deps.clock));
      return { object: 'suppression', id: added.id };
    },

    async list(teamId: string, query: ListSuppressionsQuery): Promise<ListEnvelope<Omit<SuppressionView, 'object'>>> {
      const page = parsePageQuery(query);
      const startDate = query.start_date === undefined ? undefined : parseBound('start_date', query.start_date, 'start');
      const endDate = query.end_date === undefined ? undefined : parseBound('end_date', query.end_date, 'end');
      if (startDate && endDate && endDate < startDate) throw invalidParameter('end_date', 'The `end_date` must not be before `start_date`.');
      const search = parseSearch(query.search);
      const result = await repo.list(teamId, {
        origin: parseOrigin(query.origin), search: search === undefined ? undefined : search.toLowerCase(), startDate, endDate,
      }, page);
      return listOf(result.data.map(({ id, email, origin, source_id, created_at }) => ({ id, email, origin, source_id, created_at })), result.has_more);
    },

    /** By id or by address; 404 means "not suppressed". */
    async get(teamId: string, idOrEmail: string): Promise<SuppressionView> {
      const row = await find(repo, teamId, idOrEmail);
      if (!row) throw notFound('Suppression');
      return toView(row);
    },

    /** Lifts the suppression: sending to the address is allowed again. */
    async remove(teamId: string, idOrEmail: string): Promise<Ref & { deleted: true }> {
      const row = await find(repo, teamId, idOrEmail);
      if (!row || !(await inTransaction(deps.db, (trx) => removeSuppression(trx, row, deps.clock)))) throw notFound('Suppression');
      return { object: 'suppression', id: row.id, deleted: true };
    },

    /** All or nothing: one bad address refuses the batch. */
    async batchAdd(teamId: string, emails: string[] | undefined): Promise<{ data: Ref[] }> {
      const addresses = checkBatch('emails', emails).map((e, i) => checkAddress(e, `emails[${i}]`));
      const ids = await inTransaction(deps.db, async (trx) => {
        const out: string[] = [];
        for (const address of addresses) out.push((await addSuppression(trx, teamId, address, 'manual', null, deps.clock)).id);
        return out;
      });
      return { data: ids.map((id) => ({ object: 'suppression', id })) };
    },

    /** One item per input, in order; `deleted: false` (and `id: null` for an address) when nothing matched. */
    async batchRemove(teamId: string, input: BatchRemoveInput): Promise<{ data: { object: 'suppression'; id: string | null; deleted: boolean }[] }> {
      if ((input.emails === undefined) === (input.ids === undefined)) {
        throw validationError(422, input.emails === undefined ? 'emails' : 'ids', 'Send exactly one of `emails` or `ids`.');
      }
      const refs = input.emails !== undefined
        ? checkBatch('emails', input.emails).map((e, i) => ({ email: checkAddress(e, `emails[${i}]`) }))
        : checkBatch('ids', input.ids).map((id) => ({ id }));
      const data = await inTransaction(deps.db, async (trx) => {
        const inTrx = suppressionsRepo(trx);
        const out: { object: 'suppression'; id: string | null; deleted: boolean }[] = [];
        for (const ref of refs) {
          const row = 'id' in ref ? (looksLikeId(ref.id) ? await inTrx.byId(teamId, ref.id.toLowerCase()) : undefined) : await inTrx.byEmailKey(teamId, suppressionKey(ref.email));
          const deleted = row ? await removeSuppression(trx, row, deps.clock) : false;
          out.push({ object: 'suppression', id: row?.id ?? ('id' in ref ? ref.id : null), deleted });
        }
        return out;
      });
      return { data };
    },
  };
}

export type SuppressionsService = ReturnType<typeof suppressionsService>;

const toView = (row: SuppressionRow): SuppressionView => ({
  object: 'suppression', id: row.id, email: row.email, origin: row.origin, source_id: row.source_id, created_at: row.created_at,
});

async function find(repo: SuppressionsRepo, teamId: string, idOrEmail: string): Promise<SuppressionRow | undefined> {
  if (looksLikeId(idOrEmail)) return repo.byId(teamId, idOrEmail.toLowerCase());
  if (isAddress(idOrEmail.trim())) return repo.byEmailKey(teamId, suppressionKey(idOrEmail));
  throw invalidParameter('suppression', 'The path must name a suppression id or an email address.');
}

// One address, no display name: local@domain, the domain a dotted host name (or a bracketed IP).
const addressShape = /^[^\s@<>(),;:"\\[\]]{1,64}@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$|^[^\s@<>(),;:"\\[\]]{1,64}@\[[0-9a-f:.]+\]$/i;
/** One bare address (no display name), as the suppression list and the contacts take it. */
export const isAddress = (value: string) => value.length <= 254 && addressShape.test(value.normalize('NFC').replace(/[^\x00-\x7f]/g, 'a'));

function checkAddress(value: unknown, path: string): string {
  if (value === undefined || value === null) throw missingField(path);
  if (typeof value !== 'string' || !isAddress(value.trim())) throw validationError(422, path, `The \`${path}\` field must be one email address.`);
  return value.trim();
}

function checkBatch<T>(name: string, values: T[] | undefined): T[] {
  if (values === undefined || values === null) throw missingField(name);
  if (values.length === 0 || values.length > SUPPRESSION_BATCH_MAX) {
    throw validationError(422, name, `The \`${name}\` field must hold 1 to ${SUPPRESSION_BATCH_MAX} items.`);
  }
  return values;
}

function parseOrigin(raw: string | undefined): SuppressionOrigin | undefined {
  if (raw === undefined) return undefined;
  if (!(suppressionOrigins as readonly string[]).includes(raw)) {
    throw invalidParameter('origin', `The \`origin\` parameter must be one of: ${suppressionOrigins.join(', ')}.`);
  }
  return raw as SuppressionOrigin;
}

/** An instant, or a calendar date taken whole (start of the day UTC for start, its end for end). */
function parseBound(name: string, raw: string, side: 'start' | 'end'): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) {
    const day = new Date(`${raw}T00:00:00.000Z`);
    if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== raw) throw invalidParameter(name, `The \`${name}\` parameter is not a real date.`);
    return side === 'start' ? day.toISOString() : new Date(day.getTime() + 86_400_000 - 1).toISOString();
  }
  return parseInstant(name, raw);
}

