import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../sql/db.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { ContactRow, TopicSubscription } from './contacts-tables.js';
import { drivingRange, filterCondition, idSubject, needsContactRow } from './segment-filter.js';
import type { FilterContext, SegmentMembership, SegmentRow } from './segments-tables.js';

export type SegmentChange = Pick<SegmentRow, 'name' | 'name_key' | 'updated_at'>;

/** How a membership query finds the one contact it asks about. */
export type ContactKey = { id: string } | { emailKey: string };

/**
 * Membership is "added by hand OR matches the filter", read when asked, never stored for
 * filters. Every query below states it once, as SQL (segment-filter.ts), over `contacts as c`.
 */
export interface SegmentsRepo {
  /** Inserts unless a live segment of the team has the name; answers whether it inserted. */
  insertIfAbsent(row: SegmentRow): Promise<boolean>;
  /** A live segment. */
  byId(teamId: string, id: string): Promise<SegmentRow | undefined>;
  /** Live segments among these ids. */
  byIds(teamId: string, ids: readonly string[]): Promise<SegmentRow[]>;
  liveByNameKey(teamId: string, nameKey: string): Promise<SegmentRow | undefined>;
  list(teamId: string, page: PageQuery): Promise<Page<SegmentRow>>;
  /** Live segments among these ids, a page at a time. */
  listOf(teamId: string, ids: readonly string[], page: PageQuery): Promise<Page<SegmentRow>>;
  rename(teamId: string, id: string, change: SegmentChange): Promise<void>;
  /** Soft delete: the name is free again. */
  markDeleted(teamId: string, id: string, at: string): Promise<boolean>;
  /** The team's live segments that have a filter. */
  liveFiltered(teamId: string): Promise<SegmentRow[]>;
  /** Live topics among these ids with their defaults, for compiling filters. */
  topicDefaults(teamId: string, ids: readonly string[]): Promise<Map<string, TopicSubscription>>;
  /** A page of the segment's members, newest contact first. */
  members(teamId: string, segment: SegmentMembership, context: FilterContext, page: PageQuery): Promise<Page<ContactRow>>;
  countMembers(teamId: string, segment: SegmentMembership, context: FilterContext): Promise<number>;
  /** Those of `contactIds` that match the segment's filter (none when it has none). */
  matchingFilter(teamId: string, segment: SegmentMembership, context: FilterContext, contactIds: readonly string[]): Promise<string[]>;
  /** The ids, among `segments`, of those the contact is in (by hand or by filter): one query. */
  containing(teamId: string, contact: ContactKey, segments: readonly SegmentMembership[], context: FilterContext): Promise<string[]>;
  /** Live segments the contact was added to by hand. */
  explicitOf(teamId: string, contactId: string): Promise<string[]>;
  /** Adds the team's contacts among `contactIds` by hand; answers the ids that were not yet added. */
  addMembers(teamId: string, segmentId: string, contactIds: readonly string[], at: string): Promise<string[]>;
  removeMember(teamId: string, segmentId: string, contactId: string): Promise<boolean>;
}

export function segmentsRepo(db: Db): SegmentsRepo {
  const live = () => db.selectFrom('segments').selectAll().where('deleted_at', 'is', null);
  const isMember = (teamId: string, segment: SegmentMembership, context: FilterContext) => membership(teamId, segment, context);
  return {
    async insertIfAbsent(row) {
      const result = await db.insertInto('segments').values(row)
        .onConflict((oc) => oc.columns(['team_id', 'name_key']).where('deleted_at', 'is', null).doNothing()).executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    byId: (teamId, id) => live().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    byIds: async (teamId, ids) => ids.length === 0 ? [] : live().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute(),
    liveByNameKey: (teamId, nameKey) => live().where('team_id', '=', teamId).where('name_key', '=', nameKey).executeTakeFirst(),
    list: (teamId, page) => paginate(db, live().where('team_id', '=', teamId), 'id', page),
    listOf: async (teamId, ids, page) => ids.length === 0 ? { data: [], has_more: false }
      : paginate(db, live().where('team_id', '=', teamId).where('id', 'in', [...ids]), 'id', page),
    async rename(teamId, id, change) {
      await db.updateTable('segments').set(change).where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).execute();
    },
    async markDeleted(teamId, id, at) {
      const r = await db.updateTable('segments').set({ deleted_at: at, updated_at: at })
        .where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    liveFiltered: (teamId) => live().where('team_id', '=', teamId).where('filter', 'is not', null).orderBy('id').execute(),
    async topicDefaults(teamId, ids) {
      if (ids.length === 0) return new Map();
      const rows = await db.selectFrom('topics').select(['id', 'default_subscription'])
        .where('team_id', '=', teamId).where('id', 'in', [...ids]).where('deleted_at', 'is', null).execute();
      return new Map(rows.map((r) => [r.id, r.default_subscription]));
    },
    members: (teamId, segment, context, page) =>
      paginate(db, db.selectFrom('contacts as c').selectAll('c').where('c.team_id', '=', teamId).where(isMember(teamId, segment, context)), 'c.id', page),
    async countMembers(teamId, segment, context) {
      const range = segment.filter === null ? undefined : drivingRange(segment.filter, context);
      if (!range) {
        const row = await db.selectFrom('contacts as c').select(sql<number>`count(*)`.as('n'))
          .where('c.team_id', '=', teamId).where(isMember(teamId, segment, context)).executeTakeFirst();
        return Number(row?.n ?? 0);
      }
      // Those matching the filter, found from the index range of one of its conditions, then those
      // added by hand that do not match it: the same count as "by hand or matches", each part able
      // to use an index where the OR could not. When the rest of the filter tests only properties,
      // topics and the subscription, it is asked of the value row's contact id and no contact row
      // is read: a value row of the team is always one of the team's contacts (written with the
      // contact's team, erased with the contact in one transaction). At 1M contacts that is 23 ms
      // instead of 210 for `plan = pro` and ~0.3 s instead of ~0.65-0.9 s for three conditions
      // (bench/README.md). Otherwise each CROSS JOIN keeps SQLite from starting at the team's
      // contacts; PostgreSQL plans it as any join.
      const inRange = db.selectFrom('contact_property_values as d').select(sql<number>`count(*)`.as('n'))
        .where('d.team_id', '=', teamId).where('d.key', '=', range.key).where(range.test);
      const byFilter = needsContactRow(range.rest)
        ? await inRange.crossJoin('contacts as c').whereRef('c.id', '=', 'd.contact_id').where('c.team_id', '=', teamId)
          .where(filterCondition(range.rest, context)).executeTakeFirst()
        : await inRange.where(filterCondition(range.rest, context, idSubject(teamId, sql.ref('d.contact_id')))).executeTakeFirst();
      const byHandOnly = await db.selectFrom('segment_members as m').crossJoin('contacts as c').whereRef('c.id', '=', 'm.contact_id')
        .select(sql<number>`count(*)`.as('n')).where('m.segment_id', '=', segment.id).where('m.team_id', '=', teamId)
        .where('c.team_id', '=', teamId).where(sql<SqlBool>`not ${filterCondition(segment.filter!, context)}`).executeTakeFirst();
      return Number(byFilter?.n ?? 0) + Number(byHandOnly?.n ?? 0);
    },
    async matchingFilter(teamId, segment, context, contactIds) {
      if (segment.filter === null || contactIds.length === 0) return [];
      const rows = await db.selectFrom('contacts as c').select('c.id').where('c.team_id', '=', teamId)
        .where('c.id', 'in', [...contactIds]).where(filterCondition(segment.filter, context)).execute();
      return rows.map((r) => r.id);
    },
    async containing(teamId, contact, segments, context) {
      if (segments.length === 0) return [];
      const byFilter = segments.flatMap((s) => (s.filter === null ? [] : [sql<SqlBool>`(s.id = ${s.id} and ${filterCondition(s.filter, context)})`]));
      const byHand = sql<SqlBool>`exists (select 1 from segment_members m where m.segment_id = s.id and m.contact_id = c.id)`;
      const rows = await db.selectFrom('segments as s')
        .innerJoin('contacts as c', (j) => j.onRef('c.team_id', '=', 's.team_id'))
        .select('s.id')
        .where('s.team_id', '=', teamId).where('s.id', 'in', segments.map((s) => s.id)).where('s.deleted_at', 'is', null)
        .where('id' in contact ? sql<SqlBool>`c.id = ${contact.id}` : sql<SqlBool>`c.email_key = ${contact.emailKey}`)
        .where(sql<SqlBool>`(${sql.join([byHand, ...byFilter], sql.raw(' or '))})`)
        .execute();
      return rows.map((r) => r.id);
    },
    async explicitOf(teamId, contactId) {
      const rows = await db.selectFrom('segment_members as m').innerJoin('segments as s', 's.id', 'm.segment_id')
        .select('m.segment_id').where('m.contact_id', '=', contactId).where('m.team_id', '=', teamId).where('s.deleted_at', 'is', null).execute();
      return rows.map((r) => r.segment_id);
    },
    async addMembers(teamId, segmentId, contactIds, at) {
      if (contactIds.length === 0) return [];
      // Each value cast as text: PostgreSQL cannot type a bare parameter in a select list.
      const rows = await db.insertInto('segment_members').columns(['team_id', 'segment_id', 'contact_id', 'created_at'])
        .expression(db.selectFrom('contacts').select([
          'contacts.team_id', sql<string>`cast(${segmentId} as text)`.as('segment_id'), 'contacts.id as contact_id', sql<string>`cast(${at} as text)`.as('created_at'),
        ]).where('contacts.team_id', '=', teamId).where('contacts.id', 'in', [...contactIds]))
        .onConflict((oc) => oc.columns(['segment_id', 'contact_id']).doNothing())
        .returning('contact_id').execute();
      return rows.map((r) => r.contact_id);
    },
    async removeMember(teamId, segmentId, contactId) {
      const r = await db.deleteFrom('segment_members').where('team_id', '=', teamId)
        .where('segment_id', '=', segmentId).where('contact_id', '=', contactId).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
  };
}

/** "Added by hand, or matches the filter" as a condition on `contacts as c`. */
function membership(teamId: string, segment: SegmentMembership, context: FilterContext): RawBuilder<SqlBool> {
  const byHand = sql<SqlBool>`exists (select 1 from segment_members m where m.segment_id = ${segment.id} and m.contact_id = c.id and m.team_id = ${teamId})`;
  return segment.filter === null ? byHand : sql<SqlBool>`(${byHand} or ${filterCondition(segment.filter, context)})`;
}
