import type { Db } from '../../storage/sql/index.js';
import {
  contactPropertiesRepo, platformEventsRepo, segmentsRepo,
  type ContactKey, type ContactRow, type FieldCondition, type FilterContext, type FilterNode, type SegmentFilter,
  type SegmentMembership, type SegmentRow,
} from '../../storage/repos/index.js';
import type { Page, PageQuery } from '../../storage/sql/index.js';
import { notFound, validationError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { emitPlatformEvent } from '../outbox/index.js';

// Membership: a contact is in a segment when it was added by hand or matches the filter now
// (spec: evaluated when read, never stored). The filter becomes one SQL condition
// (storage/repos/segment-filter.ts) read against the team's properties and topics as they are.
// What other areas use — the contacts list, broadcasts, imports, automations — is here.

export const parseFilter = (row: SegmentRow): SegmentMembership => ({ id: row.id, filter: row.filter === null ? null : JSON.parse(row.filter) as SegmentFilter });

function conditionsOf(node: FilterNode, out: FilterNode[] = []): FilterNode[] {
  if ('all' in node) node.all.forEach((n) => conditionsOf(n, out));
  else if ('any' in node) node.any.forEach((n) => conditionsOf(n, out));
  else if ('not' in node) (Array.isArray(node.not) ? node.not : [node.not]).forEach((n) => conditionsOf(n, out));
  else out.push(node);
  return out;
}

/** The team's declared properties and live topics that these segments' filters name: two small reads. */
export async function filterContext(db: Db, teamId: string, segments: readonly SegmentMembership[]): Promise<FilterContext> {
  const conditions = segments.flatMap((s) => (s.filter ? conditionsOf(s.filter) : []));
  const keys = new Set<string>();
  const topicIds = new Set<string>();
  for (const c of conditions) {
    if ('topic' in c) topicIds.add(c.topic);
    else if ((c as FieldCondition).field.startsWith('properties.')) keys.add((c as FieldCondition).field.slice('properties.'.length));
  }
  const declared = await contactPropertiesRepo(db).byKeys(teamId, [...keys]);
  return {
    properties: new Map(declared.map((p) => [p.key, p.type])),
    topics: await segmentsRepo(db).topicDefaults(teamId, [...topicIds]),
  };
}

/** A live segment of the team, or 404. */
export async function liveSegment(db: Db, teamId: string, id: string): Promise<SegmentRow> {
  const row = looksLikeId(id) ? await segmentsRepo(db).byId(teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound('Segment');
  return row;
}

/** A page of a live segment's members (contact rows, newest first); 404 for no such segment. */
export async function segmentMembersPage(db: Db, teamId: string, segmentId: string, page: PageQuery): Promise<Page<ContactRow>> {
  const segment = parseFilter(await liveSegment(db, teamId, segmentId));
  return segmentsRepo(db).members(teamId, segment, await filterContext(db, teamId, [segment]), page);
}

/** How many contacts are in a live segment now (one counting query). */
export async function countMembers(db: Db, teamId: string, segmentId: string): Promise<number> {
  const segment = parseFilter(await liveSegment(db, teamId, segmentId));
  return segmentsRepo(db).countMembers(teamId, segment, await filterContext(db, teamId, [segment]));
}

/**
 * Refuses (422 validation_error, one entry per unknown id at `<path>[i].id`) ids that are not live
 * segments of the team. Answers the ids lower-cased, each once.
 */
export async function checkSegmentsExist(db: Db, teamId: string, ids: readonly string[], path = 'segments'): Promise<string[]> {
  const wanted = ids.map((id) => id.toLowerCase());
  const live = new Set((await segmentsRepo(db).byIds(teamId, wanted.filter(looksLikeId))).map((s) => s.id));
  const errors = wanted.flatMap((id, i) => (live.has(id) ? [] : [{ path: `${path}[${i}].id`, message: `Segment \`${ids[i]}\` not found.` }]));
  if (errors.length) {
    const error = validationError(422, undefined, errors[0]!.message);
    error.options.errors = errors;
    throw error;
  }
  return [...new Set(wanted)];
}

/**
 * Membership by hand for areas that add many contacts at once (contact imports): which named
 * segments are missing, and adding contacts to several segments in the caller's transaction.
 */
export const explicitMembership = (db: Db) => ({
  missing: (teamId: string, ids: readonly string[]) => missingSegments(db, teamId, ids),
  async add(trx: Db, teamId: string, segmentIds: readonly string[], contactIds: readonly string[], now: Date): Promise<void> {
    for (const segmentId of segmentIds) await addExplicitMembers(trx, teamId, segmentId, contactIds, now);
  },
});

/** The ids among `ids` that are not live segments of the team (no error: the caller words it). */
export async function missingSegments(db: Db, teamId: string, ids: readonly string[]): Promise<string[]> {
  const live = new Set((await segmentsRepo(db).byIds(teamId, ids.map((id) => id.toLowerCase()).filter(looksLikeId))).map((s) => s.id));
  return ids.filter((id) => !live.has(id.toLowerCase()));
}

/**
 * Adds the team's contacts among `contactIds` to a live segment by hand, in the caller's
 * transaction. Each contact not already added writes svc:segment.entered, unless it was in
 * already by the segment's filter. Contacts of another team are ignored. Answers the ids added.
 * Cost: one insert and, for a filter segment, one query over the added contacts (callers with
 * many contacts pass them in batches of a few hundred).
 */
export async function addExplicitMembers(trx: Db, teamId: string, segmentId: string, contactIds: readonly string[], now: Date): Promise<string[]> {
  const segment = parseFilter(await liveSegment(trx, teamId, segmentId));
  const repo = segmentsRepo(trx);
  const added = await repo.addMembers(teamId, segment.id, contactIds, now.toISOString());
  const inByFilter = new Set(await repo.matchingFilter(teamId, segment, await filterContext(trx, teamId, [segment]), added));
  for (const contactId of added) {
    if (!inByFilter.has(contactId)) await emitEntered(trx, teamId, segment.id, contactId, now);
  }
  return added;
}

export const emitEntered = (trx: Db, teamId: string, segmentId: string, contactId: string, at: Date) =>
  emitPlatformEvent(platformEventsRepo(trx), teamId, 'svc:segment.entered', contactId, { contact_id: contactId, segment_id: segmentId }, at);

/** The ids, among `segments`, of those the contact is in; at most CHUNK segments per query. */
export async function segmentsContaining(db: Db, teamId: string, contact: ContactKey, segments: readonly SegmentMembership[], context: FilterContext): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < segments.length; i += SEGMENTS_PER_QUERY) {
    for (const id of await segmentsRepo(db).containing(teamId, contact, segments.slice(i, i + SEGMENTS_PER_QUERY), context)) found.add(id);
  }
  return found;
}

/**
 * Filters per membership query: 25 filters of at most 20 conditions keep a statement to at most
 * 500 conditions, far inside SQLite's expression and parameter limits and PostgreSQL's.
 */
export const SEGMENTS_PER_QUERY = 25;
