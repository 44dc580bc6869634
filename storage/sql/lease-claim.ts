import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { isPostgres } from './dialect.js';

// The claim every leased queue makes (durable work items, webhook deliveries): the rows a query
// chooses are given to one owner until a time, and no two owners ever get the same row. SQLite
// runs one writer at a time, so a conditional UPDATE of the chosen ids is enough. On PostgreSQL
// the chosen rows are locked as they are chosen (FOR UPDATE SKIP LOCKED: a row another claim
// holds is passed over, not waited for), the ids go in a CTE run once (as `id IN (subquery)` the
// planner may run the subquery again per updated row, each time passing over other locked rows),
// and the update checks the claimable state again, as the row may have changed before the lock.

export interface LeaseClaim {
  table: string;
  /** Selects the `id`s to claim, in claim order, with its limit. */
  chosen: SelectQueryBuilder<any, any, { id: string }>;
  /** What a claim writes: the owner, the lease's end, the new state. */
  set: Record<string, unknown>;
  /** The column and values a row must still hold to be claimed. */
  still: { column: string; values: readonly string[] };
}

export function claimLeased<Row>(db: Kysely<any>, claim: LeaseClaim): Promise<Row[]> {
  return leaseClaimQuery(db, claim).execute() as Promise<Row[]>;
}

/** The claim as a query, for a caller that compiles it once (compiled.ts) and binds its values. */
export function leaseClaimQuery(db: Kysely<any>, claim: LeaseClaim) {
  const { table, chosen, set, still } = claim;
  if (!isPostgres(db)) {
    // `+column` keeps the state check off its index: SQLite's planner otherwise walked every row of
    // the state (all the queued recipients of a large broadcast) to test each against the chosen
    // ids, about 2 ms a claim at 30,000 queued, instead of looking up the few chosen ids.
    const stillHolds = sql<string>`+${sql.ref(still.column)}`;
    return db.updateTable(table).set(set).where('id', 'in', chosen).where(stillHolds, 'in', still.values).returningAll();
  }
  return db.with('chosen', () => chosen.forUpdate().skipLocked())
    .updateTable(table).set(set).from('chosen').whereRef(`${table}.id`, '=', 'chosen.id')
    .where(`${table}.${still.column}`, 'in', still.values).returningAll(table);
}
