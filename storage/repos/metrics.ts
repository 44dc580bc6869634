import { sql } from 'kysely';
import type { Db } from '../sql/db.js';
import { isPostgres } from '../sql/dialect.js';
import { metricCounts, type MetricCounters, type MetricsEmailMarkRow } from './metrics-tables.js';

export { metricCounts, type MetricCount, type MetricCounters, type MetricsEmailMinuteRow, type MetricsMinuteRow } from './metrics-tables.js';

// The metrics rollups (migration 007): what the rollup writes, in the transaction that also moves
// its outbox position, and the one aggregate query the endpoint reads.

/** IN lists are cut to this many values (SQLite allows 32,766 parameters per statement). */
const IN_CHUNK = 500;

const chunks = <T>(items: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/**
 * One rollup row being added: its keys and its counters in metricCounts order. A batch of them is
 * written as ONE statement with ONE parameter, a JSON array of rows that SQLite's jsonb_each
 * expands: thousands of rows per batch cost no per-value query building in JavaScript.
 */
export interface MetricsBucket {
  team_id: string;
  minute: number;
  domain_id: string;
  broadcast_id: string;
  email_id?: string;
  counters: number[];
}

/** `col = col + excluded.col` for every counter: an upsert adds, never overwrites. */
const addCounters = sql.raw(metricCounts.map((c) => `${c} = ${c} + excluded.${c}`).join(', '));

function upsertBuckets(db: Db, table: 'metrics_minutes' | 'metrics_quarters' | 'metrics_email_minutes', rows: readonly MetricsBucket[]) {
  const perEmail = table === 'metrics_email_minutes';
  const keys = perEmail ? ['email_id', 'minute', 'team_id', 'domain_id', 'broadcast_id'] : ['team_id', 'minute', 'domain_id', 'broadcast_id'];
  const columns = [...keys, ...metricCounts];
  const conflict = perEmail ? 'email_id, minute' : 'team_id, minute, domain_id, broadcast_id';
  const json = JSON.stringify(rows.map((r) => [...keys.map((k) => r[k as keyof MetricsBucket]), ...r.counters]));
  if (isPostgres(db)) {
    // PostgreSQL: the array's elements through jsonb_array_elements, each value cast to its column;
    // in DO UPDATE a bare column name is ambiguous (the table or excluded), so it is qualified.
    const values = columns.map((c, i) => (c === 'minute' || metricCounts.includes(c as never) ? `(value ->> ${i})::integer` : `value ->> ${i}`));
    return sql`insert into ${sql.table(table)} (${sql.raw(columns.join(', '))})
      select ${sql.raw(values.join(', '))} from jsonb_array_elements(${json}::jsonb) as rows(value)
      on conflict (${sql.raw(conflict)}) do update set ${sql.raw(metricCounts.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', '))}`.execute(db);
  }
  return sql`insert into ${sql.table(table)} (${sql.raw(columns.join(', '))})
    select ${sql.raw(columns.map((_, i) => `value ->> ${i}`).join(', '))} from jsonb_each(${json}) where true
    on conflict (${sql.raw(conflict)}) do update set ${addCounters}`.execute(db);
}

export interface MetricsRollupRepo {
  /**
   * The first write of a rollup transaction: it takes SQLite's write lock before anything is read,
   * so two processes rolling up at once run one after the other and never count an event twice.
   * On PostgreSQL it locks the cursor's row (FOR UPDATE) to the same end.
   */
  lockCursor(name: string): Promise<void>;
  cursor(name: string): Promise<number>;
  setCursor(name: string, seq: number): Promise<void>;
  /** domain_id of sent emails, then of received ones, by email id. */
  domainsOfEmails(ids: readonly string[]): Promise<Map<string, string | null>>;
  /** Per email: recipients handed to the MTA (neither suppressed, canceled nor still scheduled). */
  sentRecipients(ids: readonly string[]): Promise<Map<string, number>>;
  /** Which of these emails already carry which marks. */
  marksOf(ids: readonly string[]): Promise<Set<string>>;
  insertMarks(rows: readonly MetricsEmailMarkRow[]): Promise<void>;
  /** Adds each bucket's counters to metrics_minutes (email_id ignored). */
  addMinutes(rows: readonly MetricsBucket[]): Promise<void>;
  /** Adds each bucket's counters to metrics_quarters (`minute`: the quarter's first minute). */
  addQuarters(rows: readonly MetricsBucket[]): Promise<void>;
  /** Adds each bucket's counters to metrics_email_minutes (email_id required). */
  addEmailMinutes(rows: readonly MetricsBucket[]): Promise<void>;
  /** Copies the names of these domains, so a domain deleted later keeps its name in metrics. */
  rememberDomains(ids: readonly string[]): Promise<void>;
}

export const markKey = (emailId: string, kind: string) => `${emailId} ${kind}`;

export function metricsRollupRepo(db: Db): MetricsRollupRepo {
  return {
    async lockCursor(name) {
      await db.insertInto('outbox_cursors').values({ name, seq: 0 }).onConflict((oc) => oc.column('name').doNothing()).execute();
      if (isPostgres(db)) await db.selectFrom('outbox_cursors').select('seq').where('name', '=', name).forUpdate().execute();
    },
    async cursor(name) {
      const row = await db.selectFrom('outbox_cursors').select('seq').where('name', '=', name).executeTakeFirst();
      return row?.seq ?? 0;
    },
    async setCursor(name, seq) {
      await db.updateTable('outbox_cursors').set({ seq }).where('name', '=', name).execute();
    },
    async domainsOfEmails(ids) {
      const found = new Map<string, string | null>();
      for (const part of chunks(ids, IN_CHUNK)) {
        for (const r of await db.selectFrom('emails').select(['id', 'domain_id']).where('id', 'in', part).execute()) found.set(r.id, r.domain_id);
      }
      const rest = ids.filter((id) => !found.has(id));
      for (const part of chunks(rest, IN_CHUNK)) {
        for (const r of await db.selectFrom('received_emails').select(['id', 'domain_id']).where('id', 'in', part).execute()) found.set(r.id, r.domain_id);
      }
      return found;
    },
    async sentRecipients(ids) {
      const counts = new Map<string, number>();
      for (const part of chunks(ids, IN_CHUNK)) {
        const rows = await db.selectFrom('email_recipients').select(['email_id', (eb) => eb.fn.countAll<number>().as('n')])
          .where('email_id', 'in', part).where('state', 'not in', ['suppressed', 'canceled', 'scheduled'])
          .groupBy('email_id').execute();
        for (const r of rows) counts.set(r.email_id, Number(r.n));
      }
      return counts;
    },
    async marksOf(ids) {
      const marks = new Set<string>();
      for (const part of chunks(ids, IN_CHUNK)) {
        for (const r of await db.selectFrom('metrics_email_marks').select(['email_id', 'kind']).where('email_id', 'in', part).execute()) marks.add(markKey(r.email_id, r.kind));
      }
      return marks;
    },
    async insertMarks(rows) {
      if (rows.length === 0) return;
      const json = JSON.stringify(rows.map((r) => [r.email_id, r.kind, r.minute]));
      if (isPostgres(db)) {
        await sql`insert into metrics_email_marks (email_id, kind, minute)
          select value ->> 0, value ->> 1, (value ->> 2)::integer from jsonb_array_elements(${json}::jsonb) as rows(value)
          on conflict (email_id, kind) do nothing`.execute(db);
        return;
      }
      await sql`insert into metrics_email_marks (email_id, kind, minute)
        select value ->> 0, value ->> 1, value ->> 2 from jsonb_each(${json}) where true
        on conflict (email_id, kind) do nothing`.execute(db);
    },
    async addMinutes(rows) {
      if (rows.length) await upsertBuckets(db, 'metrics_minutes', rows);
    },
    async addQuarters(rows) {
      if (rows.length) await upsertBuckets(db, 'metrics_quarters', rows);
    },
    async addEmailMinutes(rows) {
      if (rows.length) await upsertBuckets(db, 'metrics_email_minutes', rows);
    },
    async rememberDomains(ids) {
      for (const part of chunks(ids, IN_CHUNK)) {
        await db.insertInto('metrics_domains').columns(['id', 'team_id', 'name'])
          .expression(db.selectFrom('domains').select(['id', 'team_id', 'name']).where('id', 'in', part))
          .onConflict((oc) => oc.column('id').doUpdateSet({ name: sql.raw('excluded.name') as never })).execute();
      }
    },
  };
}

export interface MetricsAggregateQuery {
  teamId: string;
  /** Minutes since the epoch; the window is [fromMinute, toMinute). */
  fromMinute: number;
  toMinute: number;
  /** Read the per-email rollup (email dimension or email_id filter). */
  perEmail: boolean;
  domainIds?: readonly string[];
  emailIds?: readonly string[];
  broadcastIds?: readonly string[];
  /** Only mail that belongs to a broadcast (the broadcast dimension). */
  broadcastsOnly: boolean;
  group: {
    /** Group minutes by `floor(minute / quantum)`; every period boundary is a multiple of it. */
    quantum?: number;
    domain: boolean;
    email: boolean;
    broadcast: boolean;
  };
}

export interface MetricsAggregateRow extends MetricCounters {
  /** `floor(minute / quantum)` when grouped by time. */
  slot?: number;
  domain_id?: string;
  email_id?: string;
  broadcast_id?: string;
}

export interface MetricsQueryRepo {
  /** Sums per group. A group may come back in more than one row (one per piece of the window): add them up. */
  aggregate(query: MetricsAggregateQuery): Promise<MetricsAggregateRow[]>;
  /** Domain names by id: the live name, else the one remembered by the rollup. */
  domainNames(teamId: string, ids: readonly string[]): Promise<Map<string, string>>;
  /** Names of the team's broadcasts among these ids (a deleted draft has none; sent ones stay). */
  broadcastNames(teamId: string, ids: readonly string[]): Promise<Map<string, string>>;
  /** The oldest event the rollup has not read yet, if any. */
  firstPending(cursorName: string): Promise<{ seq: number; created_at: string } | undefined>;
}

/** Quarter hours: every period boundary of every IANA zone in use falls on one. */
const QUARTER = 15;

type RollupTable = 'metrics_minutes' | 'metrics_quarters' | 'metrics_email_minutes';

/**
 * The window in pieces: whole quarters from metrics_quarters and the ragged ends from
 * metrics_minutes — unless the period slots are not whole quarters (a zone with an offset off the
 * quarter hour), or per-email figures are asked for.
 */
function piecesOf(q: MetricsAggregateQuery): { table: RollupTable; from: number; to: number }[] {
  if (q.perEmail) return [{ table: 'metrics_email_minutes', from: q.fromMinute, to: q.toMinute }];
  const firstQuarter = Math.ceil(q.fromMinute / QUARTER) * QUARTER;
  const lastQuarter = Math.floor(q.toMinute / QUARTER) * QUARTER;
  const quartersFit = q.group.quantum === undefined || q.group.quantum % QUARTER === 0;
  if (!quartersFit || firstQuarter >= lastQuarter) return [{ table: 'metrics_minutes', from: q.fromMinute, to: q.toMinute }];
  return [
    { table: 'metrics_minutes' as const, from: q.fromMinute, to: firstQuarter },
    { table: 'metrics_quarters' as const, from: firstQuarter, to: lastQuarter },
    { table: 'metrics_minutes' as const, from: lastQuarter, to: q.toMinute },
  ].filter((p) => p.from < p.to);
}

async function aggregatePiece(db: Db, q: MetricsAggregateQuery, table: RollupTable, from: number, to: number): Promise<MetricsAggregateRow[]> {
  // The three tables share their columns (email_id aside); Kysely sees one shape.
  // With email ids, the primary key (email_id, minute) finds the rows; `+team_id` keeps SQLite
  // from walking the team's whole (team_id, minute) index instead, which it otherwise prefers.
  // (Unary + is SQLite's; PostgreSQL has no such operator on text and needs no such hint.)
  const byEmailIds = table === 'metrics_email_minutes' && q.emailIds !== undefined && !isPostgres(db);
  // An empty filter matches nothing: a value no id can be ('' is "none"; PostgreSQL text cannot hold NUL).
  const none = isPostgres(db) ? '\u0001' : '\u0000';
  let query = db.selectFrom(table as 'metrics_email_minutes')
    .where(byEmailIds ? sql<string>`+team_id` : sql<string>`team_id`, '=', q.teamId).where('minute', '>=', from).where('minute', '<', to);
  if (q.domainIds) query = query.where('domain_id', 'in', q.domainIds.length ? [...q.domainIds] : [none]);
  if (q.emailIds) query = query.where('email_id', 'in', q.emailIds.length ? [...q.emailIds] : [none]);
  if (q.broadcastIds) query = query.where('broadcast_id', 'in', q.broadcastIds.length ? [...q.broadcastIds] : [none]);
  if (q.broadcastsOnly) query = query.where('broadcast_id', '!=', '');
  const groups: string[] = [];
  if (q.group.quantum !== undefined) {
    if (!Number.isInteger(q.group.quantum) || q.group.quantum < 1) throw new Error('metrics: the time quantum must be a positive integer');
    groups.push(`minute / ${q.group.quantum}`);
  }
  if (q.group.domain) groups.push('domain_id');
  if (q.group.email) groups.push('email_id');
  if (q.group.broadcast) groups.push('broadcast_id');
  const sums = metricCounts.map((c) => sql<number>`sum(${sql.ref(c)})`.as(c));
  const keys = [
    ...(q.group.quantum !== undefined ? [sql<number>`${sql.raw(`minute / ${q.group.quantum}`)}`.as('slot')] : []),
    ...(q.group.domain ? [sql<string>`domain_id`.as('domain_id')] : []),
    ...(q.group.email ? [sql<string>`email_id`.as('email_id')] : []),
    ...(q.group.broadcast ? [sql<string>`broadcast_id`.as('broadcast_id')] : []),
  ];
  let selected = query.select([...keys, ...sums]);
  if (groups.length) selected = selected.groupBy(groups.map((g) => sql.raw(g)));
  const rows = await selected.execute() as unknown as MetricsAggregateRow[];
  // An aggregate without GROUP BY over no rows still answers one row of NULL sums.
  return rows.filter((r) => r.sent !== null || groups.length > 0).map((r) => {
    for (const c of metricCounts) r[c] = Number(r[c] ?? 0);
    return r;
  });
}

export function metricsQueryRepo(db: Db): MetricsQueryRepo {
  return {
    async aggregate(q) {
      const rows: MetricsAggregateRow[] = [];
      for (const piece of piecesOf(q)) rows.push(...await aggregatePiece(db, q, piece.table, piece.from, piece.to));
      return rows;
    },
    async broadcastNames(teamId, ids) {
      const names = new Map<string, string>();
      for (const part of chunks(ids, IN_CHUNK)) {
        for (const r of await db.selectFrom('broadcasts').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', part).execute()) names.set(r.id, r.name);
      }
      return names;
    },
    async domainNames(teamId, ids) {
      const names = new Map<string, string>();
      for (const part of chunks(ids, IN_CHUNK)) {
        for (const r of await db.selectFrom('metrics_domains').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', part).execute()) names.set(r.id, r.name);
        for (const r of await db.selectFrom('domains').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', part).execute()) names.set(r.id, r.name);
      }
      return names;
    },
    firstPending: (cursorName) => db.selectFrom('events').select(['seq', 'created_at'])
      .where('seq', '>', (eb) => eb.fn.coalesce(
        eb.selectFrom('outbox_cursors').select('seq').where('name', '=', cursorName),
        sql<number>`0`,
      )).orderBy('seq').limit(1).executeTakeFirst(),
  };
}
