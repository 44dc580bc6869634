import { emailKeyOf, NAME_MAX, PROPERTY_STRING_MAX, type PropertyType, type PropertyValue } from '../contacts/index.js';
import { isBareAddress } from '../suppressions/index.js';
import type { ColumnPlan } from './column-map.js';

// One CSV record checked against the column plan, with no state: a row with no usable address
// or a value that does not match its property's type is failed here with the reason (spec,
// Contact import row rules); what needs the database (existing contacts, the limit) is decided
// when the batch is written. An empty cell gives nothing: a new contact gets no value, an
// updated one keeps what it has.

export interface ImportRow {
  /** 1 is the first data row after the header. */
  rowNumber: number;
  email: string;
  emailKey: string;
  first_name: string | undefined;
  last_name: string | undefined;
  unsubscribed: boolean | undefined;
  properties: [key: string, value: PropertyValue][];
}

export interface RowFailure {
  rowNumber: number;
  /** The address as given, when the row had one (truncated to a sane length). */
  email: string | null;
  reason: string;
}

export type CheckedRow = { ok: true; row: ImportRow } | { ok: false; failure: RowFailure };

const trueWords = new Set(['true', 'yes', '1']);
const falseWords = new Set(['false', 'no', '0']);
const EMAIL_KEPT = 320;

function asBoolean(text: string): boolean | undefined {
  const word = text.toLowerCase();
  return trueWords.has(word) ? true : falseWords.has(word) ? false : undefined;
}

/** A cell's value as the property's type, or undefined when it is not one. */
function typed(text: string, type: PropertyType): PropertyValue | undefined {
  if (type === 'string') return text.length <= PROPERTY_STRING_MAX ? text : undefined;
  if (type === 'boolean') return asBoolean(text);
  // Plain decimal numbers only: `Number` would also take hex, binary and an empty string.
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

const cell = (record: readonly string[], column: number | null) => (column === null ? '' : (record[column] ?? '').trim());

export function checkRow(record: readonly string[], rowNumber: number, plan: ColumnPlan): CheckedRow {
  const given = cell(record, plan.email);
  const fail = (reason: string): CheckedRow => ({ ok: false, failure: { rowNumber, email: given === '' ? null : given.slice(0, EMAIL_KEPT), reason } });
  if (given === '') return fail('The row has no email address.');
  if (!isBareAddress(given)) return fail('The email address is not usable.');
  const row: ImportRow = {
    rowNumber, email: given, emailKey: emailKeyOf(given), first_name: undefined, last_name: undefined, unsubscribed: undefined, properties: [],
  };
  for (const key of ['first_name', 'last_name'] as const) {
    const text = cell(record, plan[key]);
    if (text.length > NAME_MAX) return fail(`\`${key}\` is longer than ${NAME_MAX} characters.`);
    if (text !== '') row[key] = text;
  }
  const unsubscribed = cell(record, plan.unsubscribed);
  if (unsubscribed !== '') {
    row.unsubscribed = asBoolean(unsubscribed);
    if (row.unsubscribed === undefined) return fail('`unsubscribed` must be true or false.');
  }
  for (const property of plan.properties) {
    const text = cell(record, property.column);
    if (text === '') continue;
    const value = typed(text, property.type);
    if (value === undefined) return fail(`Property \`${property.key}\` is a ${property.type}; the value does not match.`);
    row.properties.push([property.key, value]);
  }
  return { ok: true, row };
}
