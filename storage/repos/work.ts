import type { Db } from '../sql/db.js';
import { sql } from 'kysely';
import { isPostgres } from '../sql/dialect.js';
import { shapedStatement } from '../sql/compiled.js';
import { chunksOf } from '../sql/chunked.js';
import { leaseClaimQuery } from '../sql/lease-claim.js';

// The durable worker's rows (migrations 011, 028), claimed like every leased queue (sql/lease-claim.ts).

export type WorkState = 'queued' | 'running' | 'done' | 'failed' | 'canceled';

export interface WorkItemRow {
  id: string;
  kind: string;
  key: string;
  team_id: string | null;
  state: WorkState;
  due_at: string;
  lease_owner: string | null;
  lease_until: string | null;
  steps: number;
  payload: string;
  cursor: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export type NewWorkItem = Pick<WorkItemRow, 'id' | 'kind' | 'key' | 'team_id' | 'due_at' | 'payload' | 'created_at'>;

/** What one step moves, only while its owner still holds the lease. */
export type WorkAdvance = Partial<Pick<WorkItemRow, 'state' | 'due_at' | 'cursor' | 'error' | 'lease_owner' | 'lease_until'>>;

export interface WorkRepo {
  /** Adds an item, or answers the one already there for (kind, key). */
  enqueue(item: NewWorkItem): Promise<WorkItemRow>;
  /** Adds an item unless one is there for (kind, key); answers nothing (no read back). */
  add(item: NewWorkItem): Promise<void>;
  byId(id: string): Promise<WorkItemRow | undefined>;
  byKey(kind: string, key: string): Promise<WorkItemRow | undefined>;
  /** Claims up to `limit` due items of these kinds, or items whose owner's lease lapsed. */
  claim(kinds: readonly string[], now: string, owner: string, leaseUntil: string, limit: number): Promise<WorkItemRow[]>;
  /** When the earliest item of these kinds that no live lease holds falls due; undefined when none waits. */
  nextDue(kinds: readonly string[], now: string): Promise<string | undefined>;
  /** Moves an item one step while `owner` holds it; false when the lease was lost. */
  advance(id: string, owner: string, now: string, patch: WorkAdvance): Promise<boolean>;
  /** Moves each of these items alike, those `owner` holds; answers how many moved. */
  advanceMany(ids: readonly string[], owner: string, now: string, patch: WorkAdvance): Promise<number>;
  /** Stops an item that is not finished; its owner notices at its next step. */
  cancel(id: string, now: string): Promise<boolean>;
}

const claimable = ['queued', 'running'] as const;

export function workRepo(db: Db): WorkRepo {
  const advanceMany: WorkRepo['advanceMany'] = async (ids, owner, now, patch) => {
    // Every step of every item runs this: compiled once per shape (the columns it moves, how many
    // ids: chunked.ts's few fixed sizes, so the shapes stay few). As Kysely does, a column
    // whose value is undefined is left as it is.
    const columns = (Object.keys(patch) as (keyof WorkAdvance)[]).filter((c) => patch[c] !== undefined).sort();
    const values: Record<string, unknown> = { owner, now, running: 'running' };
    for (const c of columns) values[c] = patch[c];
    let moved = 0;
    for (const chunk of chunksOf(ids)) {
      const update = shapedStatement(db, `work.advance|${columns.join(',')}|${chunk.length}`, (m) => db.updateTable('work_items')
        .set({ ...Object.fromEntries(columns.map((c) => [c, m(c)])), steps: sql<number>`steps + 1`, updated_at: m('now') })
        .where('id', 'in', chunk.map((_, i) => m(`id${i}`))).where('lease_owner', '=', m('owner'))
        .where('state', '=', m('running') as WorkState).where('lease_until', '>=', m('now')));
      chunk.forEach((id, i) => { values[`id${i}`] = id; });
      moved += Number((await update(db, values)).numAffectedRows ?? 0n);
    }
    return moved;
  };
  return {
    async enqueue(item) {
      await db.insertInto('work_items')
        .values({ ...item, state: 'queued', steps: 0, cursor: null, error: null, lease_owner: null, lease_until: null, updated_at: item.created_at })
        .onConflict((oc) => oc.columns(['kind', 'key']).doNothing()).execute();
      return (await db.selectFrom('work_items').selectAll().where('kind', '=', item.kind).where('key', '=', item.key).executeTakeFirstOrThrow());
    },
    async add(item) {
      // Compiled once: every run enrolled adds one.
      const insert = shapedStatement(db, 'work.add', (m) => db.insertInto('work_items').values({
        id: m('id'), kind: m('kind'), key: m('key'), team_id: m('team_id'), payload: m('payload'), due_at: m('due_at'), created_at: m('created_at'),
        updated_at: m('created_at'), state: m('queued') as WorkState, steps: sql<number>`0`, cursor: sql<null>`null`, error: sql<null>`null`, lease_owner: sql<null>`null`, lease_until: sql<null>`null`,
      }).onConflict((oc) => oc.columns(['kind', 'key']).doNothing()));
      await insert(db, { ...item, queued: 'queued' });
    },
    byId: (id) => db.selectFrom('work_items').selectAll().where('id', '=', id).executeTakeFirst(),
    byKey: (kind, key) => db.selectFrom('work_items').selectAll().where('kind', '=', kind).where('key', '=', key).executeTakeFirst(),
    async claim(kinds, now, owner, leaseUntil, limit) {
      if (kinds.length === 0) return [];
      // Every claim of the jobs role's two lanes runs one: compiled once per kind count and limit
      // (building the query cost as much as SQLite's claim of a crowd of woken runs took).
      const claim = shapedStatement(db, `work.claim|${kinds.length}|${limit}`, (m) => leaseClaimQuery(db, {
        table: 'work_items', chosen: claimChoice(db, kinds.map((_, i) => m(`kind${i}`)), m('now'), limit),
        set: { state: m('running'), lease_owner: m('owner'), lease_until: m('leaseUntil'), updated_at: m('now') },
        still: { column: 'state', values: claimable.map((state) => m(state)) },
      }));
      return (await claim(db, withKinds(kinds, { now, owner, leaseUntil, queued: 'queued', running: 'running' }))).rows as WorkItemRow[];
    },
    async nextDue(kinds, now) {
      if (kinds.length === 0) return undefined;
      // Asked after every idle claim: compiled once per kind count, as the claim is.
      const select = shapedStatement(db, `work.nextDue|${kinds.length}`, (m) => claimOrder(db, kinds.map((_, i) => m(`kind${i}`)), m('now'))
        .clearSelect().select('due_at').limit(sql.lit(1)));
      return ((await select(db, withKinds(kinds, { now }))).rows[0] as { due_at: string } | undefined)?.due_at;
    },
    advance: async (id, owner, now, patch) => (await advanceMany([id], owner, now, patch)) > 0,
    advanceMany,
    async cancel(id, now) {
      const r = await db.updateTable('work_items').set({ state: 'canceled', lease_owner: null, lease_until: null, updated_at: now })
        .where('id', '=', id).where('state', 'in', claimable).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
  };
}

/** The values of a compiled statement over these kinds: their markers are kind0, kind1, … */
function withKinds(kinds: readonly string[], values: Record<string, unknown>): Record<string, unknown> {
  kinds.forEach((kind, i) => { values[`kind${i}`] = kind; });
  return values;
}

/**
 * The due items a claim takes, earliest first. Written so the planner walks work_items_claimable
 * (due_at, claimable rows only) in order and stops at the limit: the states as literals, matching
 * the partial index's own condition (a bound value cannot be proven to); on SQLite `+kind` keeps
 * the (kind, key) index, which SQLite without statistics would prefer, out of the choice
 * (PostgreSQL plans by statistics). The limit is a literal too: compiled into the statement.
 */
function claimChoice(db: Db, kinds: readonly string[], now: string, limit: number) {
  return claimOrder(db, kinds, now).where('due_at', '<=', now).limit(sql.lit(limit));
}

/** Claimable items of these kinds without a live lease, earliest due first (see claimChoice). */
function claimOrder(db: Db, kinds: readonly string[], now: string) {
  const kind = isPostgres(db) ? sql.ref('kind') : sql`+kind`;
  return db.selectFrom('work_items').select('id').where(kind, 'in', kinds).where(sql<boolean>`state in ('queued', 'running')`)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('due_at');
}
