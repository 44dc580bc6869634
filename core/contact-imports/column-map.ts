import type { PropertyType } from '../contacts/index.js';
import { checkPropertyKey } from '../contacts/index.js';
import { validationError } from '../errors.js';

// `column_map` (spec, Contact import): which CSV column gives each contact field. Keys `email`,
// `first_name`, `last_name`, `unsubscribed`, `properties`; each value a column name, and a
// `properties` entry a column name or `{column, type}` (type `string`, `number` or `boolean`).
// Checked in two passes: its shape when the upload arrives, then against the file's header
// (every named column must be there). Every refusal is 422 validation_error naming the place.

const fieldKeys = ['email', 'first_name', 'last_name', 'unsubscribed'] as const;
type FieldKey = (typeof fieldKeys)[number];
const propertyTypes: readonly PropertyType[] = ['string', 'number', 'boolean'];

/** A property column as the upload named it; `type` undefined: the declared type, else string. */
export interface PropertyColumn {
  key: string;
  column: string;
  type: PropertyType | undefined;
}

export interface ColumnMap {
  fields: Partial<Record<FieldKey, string>>;
  properties: PropertyColumn[];
}

/** The column map resolved against the header: column positions, each property with its type. */
export interface ColumnPlan {
  email: number;
  first_name: number | null;
  last_name: number | null;
  unsubscribed: number | null;
  properties: { key: string; column: number; type: PropertyType }[];
}

const refuse = (path: string, message: string) => validationError(422, path, message);

export function parseJsonField(text: string, path: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw refuse(path, `\`${path}\` is not valid JSON.`);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function columnName(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw refuse(path, `\`${path}\` must name a CSV column.`);
  return value.trim();
}

/** The shape of `column_map` (undefined: the header's own `email`, `first_name`, … columns). */
export function parseColumnMap(text: string | undefined): ColumnMap | undefined {
  if (text === undefined) return undefined;
  const value = parseJsonField(text, 'column_map');
  if (!isObject(value)) throw refuse('column_map', '`column_map` must be a JSON object.');
  const map: ColumnMap = { fields: {}, properties: [] };
  for (const [key, entry] of Object.entries(value)) {
    if (key === 'properties') map.properties = parseProperties(entry);
    else if ((fieldKeys as readonly string[]).includes(key)) map.fields[key as FieldKey] = columnName(entry, `column_map.${key}`);
    else throw refuse(`column_map.${key}`, `Unknown \`column_map\` key \`${key}\`: use ${fieldKeys.join(', ')} or properties.`);
  }
  if (map.fields.email === undefined) throw refuse('column_map.email', '`column_map` must map `email` to a column.');
  return map;
}

function parseProperties(value: unknown): PropertyColumn[] {
  if (!isObject(value)) throw refuse('column_map.properties', '`column_map.properties` must be an object of property keys.');
  const seen = new Set<string>();
  return Object.entries(value).map(([key, entry]) => {
    const path = `column_map.properties.${key}`;
    checkPropertyKey(key, path);
    if (seen.has(key.toLowerCase())) throw refuse(path, `Property \`${key}\` is mapped twice.`);
    seen.add(key.toLowerCase());
    if (typeof entry === 'string') return { key, column: columnName(entry, path), type: undefined };
    if (!isObject(entry)) throw refuse(path, `\`${path}\` must be a column name or \`{column, type}\`.`);
    const extra = Object.keys(entry).find((k) => k !== 'column' && k !== 'type');
    if (extra !== undefined) throw refuse(`${path}.${extra}`, `Unknown field \`${extra}\`: a property entry has \`column\` and \`type\`.`);
    const type = entry.type;
    if (type !== undefined && !propertyTypes.includes(type as PropertyType)) {
      throw refuse(`${path}.type`, `\`${path}.type\` must be one of ${propertyTypes.join(', ')}.`);
    }
    return { key, column: columnName(entry.column, `${path}.column`), type: type as PropertyType | undefined };
  });
}

/** Without a column map: the header's columns named like the contact fields, whatever their case. */
export function defaultColumnMap(header: readonly string[]): ColumnMap {
  const fields: ColumnMap['fields'] = {};
  for (const key of fieldKeys) {
    const column = header.find((name) => name.trim().toLowerCase() === key);
    if (column !== undefined) fields[key] = column.trim();
  }
  if (fields.email === undefined) throw refuse('column_map', 'Without a `column_map`, the header must have an `email` column.');
  return { fields, properties: [] };
}

/**
 * Column positions for the map. Every named column must be in the header, once. `declared` gives
 * the types of properties the team declared: a type the map states must agree with it.
 */
export function resolveColumnMap(map: ColumnMap, header: readonly string[], declared: ReadonlyMap<string, { key: string; type: PropertyType }>): ColumnPlan {
  const names = header.map((h) => h.trim());
  const position = (column: string, path: string): number => {
    const at = names.indexOf(column);
    if (at < 0) throw refuse(path, `Column \`${column}\` is not in the file's header.`);
    if (names.indexOf(column, at + 1) >= 0) throw refuse(path, `Column \`${column}\` appears more than once in the file's header.`);
    return at;
  };
  const optional = (key: FieldKey) => (map.fields[key] === undefined ? null : position(map.fields[key], `column_map.${key}`));
  return {
    email: position(map.fields.email!, 'column_map.email'),
    first_name: optional('first_name'),
    last_name: optional('last_name'),
    unsubscribed: optional('unsubscribed'),
    properties: map.properties.map((p) => {
      const path = `column_map.properties.${p.key}`;
      const existing = declared.get(p.key.toLowerCase());
      if (existing && p.type && existing.type !== p.type) {
        throw refuse(`${path}.type`, `Property \`${existing.key}\` is declared as a ${existing.type}, not a ${p.type}.`);
      }
      return { key: existing?.key ?? p.key, column: position(p.column, `${path}.column`), type: existing?.type ?? p.type ?? 'string' };
    }),
  };
}
