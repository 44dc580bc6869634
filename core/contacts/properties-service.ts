import type { Db } from '../../storage/sql/index.js';
import { contactPropertiesRepo, type ContactPropertiesRepo, type ContactPropertyRow, type PropertyType } from '../../storage/repos/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import { isoNow, type Clock } from '../clock.js';
import { invalidParameter, missingField, notFound, ServiceError, validationError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { checkPropertyKey, PROPERTY_STRING_MAX, type PropertyValue } from './input.js';
import { declareProperty, typeOfValue } from './properties.js';

// The contact-properties routes (the SDK's `contactProperties`): declare, list, read, change the
// fallback, delete. A property's key and type are fixed once declared.

export interface ContactPropertyView {
  object: 'contact_property';
  id: string;
  key: string;
  type: PropertyType;
  /** What a merge variable shows for a contact without a value. */
  fallback_value: PropertyValue | null;
  created_at: string;
}

export type ContactPropertyListItem = Omit<ContactPropertyView, 'object'>;

export interface CreatePropertyInput {
  key?: string;
  type?: PropertyType;
  fallback_value?: PropertyValue | null;
}

type Ref = { object: 'contact_property'; id: string };

export function contactPropertiesService(deps: { db: Db; clock: Clock }) {
  const repo = contactPropertiesRepo(deps.db);
  return {
    async create(teamId: string, input: CreatePropertyInput): Promise<Ref> {
      if (input.key === undefined) throw missingField('key');
      if (input.type === undefined) throw missingField('type');
      const key = checkKey(input.key);
      const type = input.type;
      const fallback = checkFallback(type, input.fallback_value);
      const row = await inWriteTransaction(deps.db, (trx) => declareProperty(trx, teamId, key, type, fallback, isoNow(deps.clock)));
      if (!row) throw invalidParameter('key', `A contact property \`${key}\` already exists (keys ignore case).`);
      return { object: 'contact_property', id: row.id };
    },

    async list(teamId: string, query: RawPageQuery): Promise<ListEnvelope<ContactPropertyListItem>> {
      const page = await repo.list(teamId, parsePageQuery(query));
      return listOf(page.data.map(listItem), page.has_more);
    },

    async get(teamId: string, idOrKey: string): Promise<ContactPropertyView> {
      return { object: 'contact_property', ...listItem(await find(repo, teamId, idOrKey)) };
    },

    /** Only the fallback can change; it must suit the type. */
    async update(teamId: string, idOrKey: string, input: { fallback_value?: PropertyValue | null; id?: string }): Promise<Ref> {
      const row = await find(repo, teamId, idOrKey);
      if (input.id !== undefined && input.id.toLowerCase() !== row.id) throw invalidParameter('id', 'The `id` in the body must be the property\'s own id.');
      if (input.fallback_value !== undefined) {
        const fallback = checkFallback(row.type, input.fallback_value);
        await repo.setFallback(teamId, row.id, fallback === null ? null : JSON.stringify(fallback));
      }
      return { object: 'contact_property', id: row.id };
    },

    /** The definition and every contact's value for it. */
    async remove(teamId: string, idOrKey: string): Promise<Ref & { deleted: true }> {
      const row = await find(repo, teamId, idOrKey);
      if (!(await inWriteTransaction(deps.db, (trx) => contactPropertiesRepo(trx).delete(row)))) throw notFound('Contact property');
      return { object: 'contact_property', id: row.id, deleted: true };
    },
  };
}

export type ContactPropertiesService = ReturnType<typeof contactPropertiesService>;

const listItem = (row: ContactPropertyRow): ContactPropertyListItem => ({
  id: row.id, key: row.key, type: row.type,
  fallback_value: row.fallback_value === null ? null : JSON.parse(row.fallback_value) as PropertyValue, created_at: row.created_at,
});

/** By id, or by key (keys cannot look like ids: they have no hyphens). */
async function find(repo: ContactPropertiesRepo, teamId: string, idOrKey: string): Promise<ContactPropertyRow> {
  const row = looksLikeId(idOrKey) ? await repo.byId(teamId, idOrKey.toLowerCase()) : await repo.byKeyFold(teamId, idOrKey.toLowerCase());
  if (!row) throw notFound('Contact property');
  return row;
}

function checkKey(key: string): string {
  try {
    return checkPropertyKey(key, 'key');
  } catch (err) {
    if (err instanceof ServiceError) throw validationError(422, 'key', err.message);
    throw err;
  }
}

function checkFallback(type: PropertyType, value: PropertyValue | null | undefined): PropertyValue | null {
  if (value === undefined || value === null) return null;
  if (typeOfValue(value) !== type) throw validationError(422, 'fallback_value', `The \`fallback_value\` of a ${type} property must be a ${type}.`);
  if (typeof value === 'string' && value.length > PROPERTY_STRING_MAX) {
    throw validationError(422, 'fallback_value', `The \`fallback_value\` is at most ${PROPERTY_STRING_MAX} characters.`);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw validationError(422, 'fallback_value', 'The `fallback_value` must be a finite number.');
  return value;
}
