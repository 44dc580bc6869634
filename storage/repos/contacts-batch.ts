import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import { shapedStatement, type Marker } from '../sql/compiled.js';
import { rawRunnerOf } from '../sql/raw-sqlite.js';
import type { Db } from '../sql/db.js';
import type {
  ConsentRecordRow, ContactPropertyValueRow, ContactRow, ContactTopicRow, PlatformEventRow,
} from './contacts-tables.js';

// The audience's writes for many contacts at once (contact imports): every statement covers a
// chunk of rows and is compiled once per chunk size, so a batch of a thousand rows is a dozen
// prepared statements rather than thousands of built ones. Chunk sizes are fixed (256, 64, 16,
// 4, 1) so the number of distinct statements stays small whatever the batch sizes are; on SQLite
// they run on the raw path of the write transaction (compiled.ts).

const chunkSizes = [256, 64, 16, 4, 1] as const;

/** `rows` cut into chunks of the fixed sizes, largest first. */
function chunksOf<T>(rows: readonly T[]): T[][] {
  const chunks: T[][] = [];
  let at = 0;
  for (const size of chunkSizes) {
    while (rows.length - at >= size) {
      chunks.push(rows.slice(at, at + size));
      at += size;
    }
  }
  return chunks;
}

type Build = (m: Marker, size: number) => Compilable<unknown>;

/** A chunk statement compiled once: for each parameter, the row it comes from (-1: shared) and the field. */
interface ChunkShape {
  sql: string;
  rowOf: number[];
  fieldOf: string[];
}

const chunkShapes = new WeakMap<object, Map<string, ChunkShape>>();
const markerPrefix = '\u0000svc-chunk:';

/**
 * The statement for `size` rows of `key`, compiled with this database's dialect. Markers name a
 * row and a field (`3:email`, `-1:team_id` for a value shared by every row), so each run binds a
 * flat array in the statement's own order: no marker names built per value.
 */
function chunkShape(db: Kysely<any>, key: string, size: number, build: Build): ChunkShape {
  const adapter = db.getExecutor().adapter;
  let byKey = chunkShapes.get(adapter);
  if (!byKey) chunkShapes.set(adapter, (byKey = new Map()));
  const name = `${key}.${size}`;
  let shape = byKey.get(name);
  if (!shape) {
    const compiled = build((marker) => `${markerPrefix}${marker}`, size).compile();
    const rowOf: number[] = [];
    const fieldOf: string[] = [];
    for (const p of compiled.parameters) {
      if (typeof p !== 'string' || !p.startsWith(markerPrefix)) throw new Error(`contacts-batch: a parameter is not a marker (${compiled.sql})`);
      const [row, field] = p.slice(markerPrefix.length).split(':') as [string, string];
      rowOf.push(Number(row));
      fieldOf.push(field);
    }
    shape = { sql: compiled.sql, rowOf, fieldOf };
    byKey.set(name, shape);
  }
  return shape;
}

/** Runs a chunked statement over `rows` (objects whose fields the markers name); answers the rows it returned. */
async function runChunked<T extends object>(
  db: Kysely<any>, key: string, rows: readonly T[], build: Build, shared: Record<string, unknown> = {},
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (const chunk of chunksOf(rows)) {
    const shape = chunkShape(db, key, chunk.length, build);
    const parameters = new Array<unknown>(shape.rowOf.length);
    for (let p = 0; p < parameters.length; p++) {
      const row = shape.rowOf[p]!;
      const value = row < 0 ? shared[shape.fieldOf[p]!] : (chunk[row] as Record<string, unknown>)[shape.fieldOf[p]!];
      parameters[p] = value ?? null;
    }
    const raw = rawRunnerOf(db);
    const result = raw ? raw(shape.sql, parameters) : await db.executeQuery(CompiledQuery.raw(shape.sql, parameters));
    for (const row of result.rows) found.push(row as Record<string, unknown>);
  }
  return found;
}

/** Values of `columns` for `size` rows, each marker naming its row and column. */
const valuesOf = (m: Marker, columns: readonly string[], size: number) =>
  Array.from({ length: size }, (_, i) => Object.fromEntries(columns.map((c) => [c, m(`${i}:${c}`)])));

const contactColumns = [
  'id', 'team_id', 'email', 'email_key', 'first_name', 'last_name', 'subscription_status', 'origin', 'created_at', 'updated_at',
] as const;
const valueColumns = ['contact_id', 'key', 'team_id', 'text_value', 'num_value'] as const;
const choiceColumns = ['contact_id', 'topic_id', 'team_id', 'subscription', 'updated_at'] as const;
const consentColumns = ['id', 'team_id', 'contact_id', 'email_hash', 'kind', 'topic_id', 'value', 'source', 'ip', 'user_agent', 'created_at'] as const;
const platformColumns = ['id', 'team_id', 'type', 'contact_id', 'data', 'created_at'] as const;

export interface ContactsBatchRepo {
  /** The team's contacts with these address keys. */
  byEmailKeys(teamId: string, emailKeys: readonly string[]): Promise<ContactRow[]>;
  /** Inserts the rows whose address the team does not have yet; answers the keys it inserted. */
  insertNew(rows: readonly ContactRow[]): Promise<Set<string>>;
  /** Rewrites each contact's fields (the row as it should now be). */
  rewrite(rows: readonly ContactRow[]): Promise<void>;
  /** Sets property values, replacing a contact's value for the same key. */
  setValues(rows: readonly ContactPropertyValueRow[]): Promise<void>;
  /** The explicit topic choices of these contacts. */
  choicesOf(contactIds: readonly string[]): Promise<Pick<ContactTopicRow, 'contact_id' | 'topic_id' | 'subscription'>[]>;
  setChoices(rows: readonly ContactTopicRow[]): Promise<void>;
  insertConsent(rows: readonly ConsentRecordRow[]): Promise<void>;
  insertPlatformEvents(rows: readonly PlatformEventRow[]): Promise<void>;
}

export function contactsBatchRepo(typed: Db): ContactsBatchRepo {
  // Statements built from column lists with markers for values: the row types cannot follow them.
  const db = typed as unknown as Kysely<any>;
  const insert = <T extends object>(key: string, table: string, columns: readonly string[], rows: readonly T[]) =>
    runChunked(db, key, rows, (m, size) => db.insertInto(table).values(valuesOf(m, columns, size)));
  return {
    async byEmailKeys(teamId, emailKeys) {
      const rows = await runChunked(db, 'contacts-batch.byEmailKeys', emailKeys.map((key) => ({ key })),
        (m, size) => db.selectFrom('contacts').selectAll().where('team_id', '=', m('-1:team_id'))
          .where('email_key', 'in', Array.from({ length: size }, (_, i) => m(`${i}:key`))),
        { team_id: teamId });
      return rows as unknown as ContactRow[];
    },
    async insertNew(rows) {
      const inserted = await runChunked(db, 'contacts-batch.insertNew', rows,
        (m, size) => db.insertInto('contacts').values(valuesOf(m, contactColumns, size))
          .onConflict((oc) => oc.columns(['team_id', 'email_key']).doNothing()).returning('email_key'));
      return new Set(inserted.map((r) => String(r.email_key)));
    },
    async rewrite(rows) {
      const update = shapedStatement(db, 'contacts-batch.rewrite', (m) => db.updateTable('contacts').set({
        email: m('email'), first_name: m('first_name'), last_name: m('last_name'), subscription_status: m('subscription_status'),
        origin: m('origin'), updated_at: m('updated_at'),
      }).where('team_id', '=', m('team_id')).where('id', '=', m('id')));
      for (const row of rows) {
        await update(db, {
          email: row.email, first_name: row.first_name, last_name: row.last_name, subscription_status: row.subscription_status,
          origin: row.origin, updated_at: row.updated_at, team_id: row.team_id, id: row.id,
        });
      }
    },
    async setValues(rows) {
      await runChunked(db, 'contacts-batch.setValues', rows,
        (m, size) => db.insertInto('contact_property_values').values(valuesOf(m, valueColumns, size))
          .onConflict((oc) => oc.columns(['contact_id', 'key']).doUpdateSet((eb) => ({
            text_value: eb.ref('excluded.text_value'), num_value: eb.ref('excluded.num_value'),
          }))));
    },
    async choicesOf(contactIds) {
      const rows = await runChunked(db, 'contacts-batch.choicesOf', contactIds.map((id) => ({ id })),
        (m, size) => db.selectFrom('contact_topics').select(['contact_id', 'topic_id', 'subscription'])
          .where('contact_id', 'in', Array.from({ length: size }, (_, i) => m(`${i}:id`))));
      return rows as unknown as Pick<ContactTopicRow, 'contact_id' | 'topic_id' | 'subscription'>[];
    },
    async setChoices(rows) {
      await runChunked(db, 'contacts-batch.setChoices', rows,
        (m, size) => db.insertInto('contact_topics').values(valuesOf(m, choiceColumns, size))
          .onConflict((oc) => oc.columns(['contact_id', 'topic_id']).doUpdateSet((eb) => ({
            subscription: eb.ref('excluded.subscription'), updated_at: eb.ref('excluded.updated_at'),
          }))));
    },
    insertConsent: async (rows) => { await insert('contacts-batch.consent', 'consent_records', consentColumns, rows); },
    insertPlatformEvents: async (rows) => { await insert('contacts-batch.platformEvents', 'platform_events', platformColumns, rows); },
  };
}
