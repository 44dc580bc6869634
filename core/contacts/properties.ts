import type { Db } from '../../storage/sql/index.js';
import {
  contactPropertiesRepo, contactsRepo, type ContactPropertyRow, type ContactPropertyValueRow, type PropertyType, type TypedValueRow,
} from '../../storage/repos/index.js';
import { invalidParameter, validationError } from '../errors.js';
import { newId } from '../ids.js';
import type { PropertyInput, PropertyValue } from './input.js';

// A contact's properties: each key is declared once with a type; a new key in a write is declared
// there, typed by its value; a value of the wrong type for a declared key is refused naming it.
// Keys are merge variables, which ignore case, so `Plan` in a write means the declared `plan`.

/** At most this many declared properties per team (spec Limits). */
export const PROPERTIES_PER_TEAM = 100;

/** A property as the contact shows it (the SDK's shape: the value with its type). */
export type TypedValue = { type: 'string'; value: string } | { type: 'number'; value: number } | { type: 'boolean'; value: boolean };

export const typeOfValue = (value: PropertyValue): PropertyType =>
  typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'boolean';

/** The stored columns of a value. */
export function storedValue(value: PropertyValue): Pick<ContactPropertyValueRow, 'text_value' | 'num_value'> {
  if (typeof value === 'string') return { text_value: value, num_value: null };
  if (typeof value === 'number') return { text_value: null, num_value: value };
  return { text_value: null, num_value: value ? 1 : 0 };
}

export function typedValue(row: Pick<TypedValueRow, 'type' | 'text_value' | 'num_value'>): TypedValue {
  if (row.type === 'string') return { type: 'string', value: row.text_value ?? '' };
  if (row.type === 'number') return { type: 'number', value: Number(row.num_value) };
  return { type: 'boolean', value: Number(row.num_value) !== 0 };
}

/** Values keyed by property key, as GET /contacts/{contact} shows them. */
export function propertiesOf(rows: readonly TypedValueRow[]): Record<string, TypedValue> {
  return Object.fromEntries(rows.map((r) => [r.key, typedValue(r)]));
}

/** Declares a property; the caller has checked the key. Answers the row, or undefined if the key exists. */
export async function declareProperty(
  trx: Db, teamId: string, key: string, type: PropertyType, fallback: PropertyValue | null, at: string,
): Promise<ContactPropertyRow | undefined> {
  const repo = contactPropertiesRepo(trx);
  if ((await repo.count(teamId)) >= PROPERTIES_PER_TEAM) {
    throw validationError(422, 'properties', `A team declares at most ${PROPERTIES_PER_TEAM} contact properties; \`${key}\` would be one more.`);
  }
  const row: ContactPropertyRow = {
    id: newId(), team_id: teamId, key, key_fold: key.toLowerCase(), type, fallback_value: fallback === null ? null : JSON.stringify(fallback), created_at: at,
  };
  return (await repo.insertIfAbsent(row)) ? row : undefined;
}

/**
 * Merges `input` into the contact's values key by key (null removes a key) in the caller's
 * transaction, declaring new keys. Answers whether any stored value changed.
 */
export async function mergeProperties(trx: Db, teamId: string, contactId: string, input: PropertyInput | undefined, at: string): Promise<boolean> {
  const keys = Object.keys(input ?? {});
  if (!input || keys.length === 0) return false;
  const definitions = new Map((await contactPropertiesRepo(trx).byKeys(teamId, keys)).map((d) => [d.key_fold, d]));
  const values = contactsRepo(trx);
  const current = new Map((await values.values(teamId, contactId)).map((v) => [v.key, v]));
  let changed = false;
  for (const [given, value] of Object.entries(input)) {
    let definition = definitions.get(given.toLowerCase());
    if (value === null) {
      if (definition && current.has(definition.key)) {
        await values.deleteValue(contactId, definition.key);
        changed = true;
      }
      continue;
    }
    if (!definition) {
      definition = await declareProperty(trx, teamId, given, typeOfValue(value), null, at)
        ?? await contactPropertiesRepo(trx).byKeyFold(teamId, given.toLowerCase());
      if (!definition) throw new Error('contacts: property declared but not found');
      definitions.set(definition.key_fold, definition);
    }
    if (typeOfValue(value) !== definition.type) {
      throw invalidParameter(`properties.${given}`, `Property \`${definition.key}\` is a ${definition.type}; got a ${typeOfValue(value)}.`);
    }
    const stored = storedValue(value);
    const before = current.get(definition.key);
    if (before && before.text_value === stored.text_value && (before.num_value === null ? null : Number(before.num_value)) === stored.num_value) continue;
    await values.setValue({ contact_id: contactId, key: definition.key, team_id: teamId, ...stored });
    changed = true;
  }
  return changed;
}
