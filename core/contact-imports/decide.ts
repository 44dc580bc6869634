import type { ContactRow } from '../../storage/repos/index.js';
import type { PropertyValue, SubscriptionStatus } from '../contacts/index.js';
import { newId } from '../ids.js';
import type { ImportRow, RowFailure } from './rows.js';

// The row rules of a batch, decided in memory once the batch's existing contacts are known
// (spec, Contact import): a new address is created; an existing one is updated under `upsert`
// and left alone under `skip`; a row past the contact limit is failed. A contact added from
// sends is treated as new (rule 4). An address twice in the file is created by its first row
// and updated or skipped by the next. A repeat never resubscribes an opted-out contact (rule 1):
// `unsubscribed` true opts a contact out, false changes nothing.

export type EntryKind = 'new' | 'revived' | 'existing';

export interface Entry {
  kind: EntryKind;
  row: ContactRow;
  /** The status the contact had before the import (undefined for a new one). */
  before: SubscriptionStatus | undefined;
  /** An existing contact the batch updates. */
  touched: boolean;
  values: Map<string, PropertyValue>;
}

export interface Decisions {
  entries: Map<string, Entry>;
  failures: RowFailure[];
  created: number;
  updated: number;
  skipped: number;
}

export interface DecideInput {
  teamId: string;
  mode: 'upsert' | 'skip';
  /** Existing contacts of the batch's addresses, by address key. */
  existing: ReadonlyMap<string, ContactRow>;
  /** 0: no limit; else the most counted contacts the team may hold, and how many it holds. */
  limit: number;
  counted: number;
  at: string;
}

export function decide(input: DecideInput, rows: readonly ImportRow[], failures: RowFailure[]): Decisions {
  const d: Decisions = { entries: new Map(), failures, created: 0, updated: 0, skipped: 0 };
  let counted = input.counted;
  for (const row of rows) {
    const entry = d.entries.get(row.emailKey);
    const stored = entry ? undefined : input.existing.get(row.emailKey);
    if (entry || (stored && stored.origin !== 'sends')) {
      if (input.mode === 'skip') {
        d.skipped++;
        continue;
      }
      const target = entry ?? track(d, stored!);
      update(target, row, input.at);
      d.updated++;
      continue;
    }
    if (input.limit > 0 && counted >= input.limit) {
      d.failures.push({ rowNumber: row.rowNumber, email: row.email, reason: 'Contact limit reached.' });
      continue;
    }
    counted++;
    d.created++;
    d.entries.set(row.emailKey, create(input, row, stored));
  }
  return d;
}

function track(d: Decisions, stored: ContactRow): Entry {
  const entry: Entry = { kind: 'existing', row: { ...stored }, before: stored.subscription_status, touched: true, values: new Map() };
  d.entries.set(stored.email_key, entry);
  return entry;
}

function create(input: DecideInput, row: ImportRow, stored: ContactRow | undefined): Entry {
  const status: SubscriptionStatus = row.unsubscribed === true ? 'unsubscribed' : 'subscribed';
  const fields = {
    email: row.email, email_key: row.emailKey, first_name: row.first_name ?? null, last_name: row.last_name ?? null,
    subscription_status: status, origin: 'import' as const, updated_at: input.at,
  };
  const contact: ContactRow = stored
    ? { ...stored, ...fields }
    : { id: newId(), team_id: input.teamId, ...fields, created_at: input.at };
  return { kind: stored ? 'revived' : 'new', row: contact, before: undefined, touched: false, values: new Map(row.properties) };
}

function update(entry: Entry, row: ImportRow, at: string): void {
  if (row.first_name !== undefined) entry.row.first_name = row.first_name;
  if (row.last_name !== undefined) entry.row.last_name = row.last_name;
  if (row.unsubscribed === true) entry.row.subscription_status = 'unsubscribed';
  for (const [key, value] of row.properties) entry.values.set(key, value);
  entry.row.updated_at = at;
}
