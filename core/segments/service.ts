import type { Db } from '../../storage/sql/index.js';
import {
  contactPropertiesRepo, contactsRepo, segmentsRepo, type ContactRow, type SegmentFilter, type SegmentRow,
} from '../../storage/repos/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import { isoNow, type Clock } from '../clock.js';
import { invalidParameter, missingField, notFound, ServiceError, validationError, type FieldError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { isBareAddress, suppressionKey } from '../suppressions/index.js';
import { judgeConditions, namedInFilter, readFilterShape } from './filter.js';
import { addExplicitMembers, filterContext, liveSegment, parseFilter, segmentsContaining } from './membership.js';

export const SEGMENT_NAME_MAX = 200;

/** A segment in a list (and a contact's segments): no filter (spec). */
export interface SegmentListItem {
  id: string;
  name: string;
  created_at: string;
}

export interface SegmentView extends SegmentListItem {
  object: 'segment';
  /** null: members are only those added by hand. */
  filter: SegmentFilter | null;
}

export interface CreateSegmentInput {
  name?: string;
  filter?: unknown;
}

export interface UpdateSegmentInput {
  /** Accepted when equal to the path id (the SDK's tolerance, as elsewhere). */
  id?: string;
  name?: string;
  /** Never changed: accepted only when it is the segment's own. */
  filter?: unknown;
}

type Ref = { object: 'segment'; id: string };

export function segmentsService(deps: { db: Db; clock: Clock }) {
  const repo = segmentsRepo(deps.db);
  const write = <T>(fn: (trx: Db) => Promise<T>) => inWriteTransaction(deps.db, fn);
  return {
    async create(teamId: string, input: CreateSegmentInput): Promise<Ref> {
      const name = checkName(input.name);
      const filter = input.filter === undefined || input.filter === null ? null : await checkFilter(deps.db, teamId, input.filter);
      const at = isoNow(deps.clock);
      const row: SegmentRow = {
        id: newId(), team_id: teamId, name, name_key: nameKey(name), filter: filter === null ? null : JSON.stringify(filter),
        created_at: at, updated_at: at, deleted_at: null,
      };
      if (!(await write((trx) => segmentsRepo(trx).insertIfAbsent(row)))) throw duplicateName(name);
      return { object: 'segment', id: row.id };
    },

    async list(teamId: string, query: RawPageQuery): Promise<ListEnvelope<SegmentListItem>> {
      const page = await repo.list(teamId, parsePageQuery(query));
      return listOf(page.data.map(listItem), page.has_more);
    },

    async get(teamId: string, id: string): Promise<SegmentView> {
      const row = await liveSegment(deps.db, teamId, id);
      return { object: 'segment', ...listItem(row), filter: parseFilter(row).filter };
    },

    /** Renames; the filter is fixed (spec: for a different audience, create a new segment). */
    async update(teamId: string, id: string, input: UpdateSegmentInput): Promise<Ref> {
      const segment = await liveSegment(deps.db, teamId, id);
      if (input.id !== undefined && input.id.toLowerCase() !== segment.id) throw invalidParameter('id', 'The `id` in the body must be the segment\'s own id.');
      if (input.filter !== undefined && JSON.stringify(input.filter) !== (segment.filter ?? 'null')) {
        throw validationError(422, 'filter', 'A segment\'s filter is never changed; create a new segment for a different audience.');
      }
      if (input.name === undefined) return { object: 'segment', id: segment.id };
      const name = checkName(input.name);
      await write(async (trx) => {
        const other = await segmentsRepo(trx).liveByNameKey(teamId, nameKey(name));
        if (other && other.id !== segment.id) throw duplicateName(name);
        await segmentsRepo(trx).rename(teamId, segment.id, { name, name_key: nameKey(name), updated_at: isoNow(deps.clock) });
      });
      return { object: 'segment', id: segment.id };
    },

    /** Soft: gone for every read, its name free again. */
    async remove(teamId: string, id: string): Promise<Ref & { deleted: true }> {
      const segment = await liveSegment(deps.db, teamId, id);
      if (!(await write((trx) => segmentsRepo(trx).markDeleted(teamId, segment.id, isoNow(deps.clock))))) throw notFound('Segment');
      return { object: 'segment', id: segment.id, deleted: true };
    },

    /** The live segments the contact is in now, by hand or by filter. */
    async listForContact(teamId: string, ref: string, query: RawPageQuery): Promise<ListEnvelope<SegmentListItem>> {
      const page = parsePageQuery(query);
      const contact = await findContact(deps.db, teamId, ref);
      const segments = (await repo.liveFiltered(teamId)).map(parseFilter);
      const byFilter = await segmentsContaining(deps.db, teamId, { id: contact.id }, segments, await filterContext(deps.db, teamId, segments));
      const ids = [...new Set([...byFilter, ...(await repo.explicitOf(teamId, contact.id))])];
      const result = await repo.listOf(teamId, ids, page);
      return listOf(result.data.map(listItem), result.has_more);
    },

    /** Adds the contact by hand (svc:segment.entered unless it was in already). */
    async addContact(teamId: string, ref: string, segmentId: string): Promise<{ id: string }> {
      return write(async (trx) => {
        const contact = await findContact(trx, teamId, ref);
        const segment = await liveSegment(trx, teamId, segmentId);
        await addExplicitMembers(trx, teamId, segment.id, [contact.id], deps.clock.now());
        return { id: segment.id };
      });
    },

    /** Takes back an addition by hand; a contact in by the filter stays in by it. */
    async removeContact(teamId: string, ref: string, segmentId: string): Promise<{ id: string; deleted: true }> {
      return write(async (trx) => {
        const contact = await findContact(trx, teamId, ref);
        const segment = await liveSegment(trx, teamId, segmentId);
        if (!(await segmentsRepo(trx).removeMember(teamId, segment.id, contact.id))) {
          throw new ServiceError(404, 'not_found', 'The contact was not added to this segment by hand; membership by the filter cannot be removed.');
        }
        return { id: segment.id, deleted: true };
      });
    },
  };
}

export type SegmentsService = ReturnType<typeof segmentsService>;

const listItem = (row: SegmentRow): SegmentListItem => ({ id: row.id, name: row.name, created_at: row.created_at });

/** Live names compare trimmed and case-insensitively, as topics' do. */
const nameKey = (name: string) => name.trim().toLowerCase();

const duplicateName = (name: string) => invalidParameter('name', `A segment named "${name}" already exists.`);

function checkName(name: string | undefined): string {
  if (name === undefined) throw missingField('name');
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > SEGMENT_NAME_MAX) throw validationError(422, 'name', `A segment name is 1-${SEGMENT_NAME_MAX} characters.`);
  return trimmed;
}

/** The whole filter judged against the team; 422 validation_error with one entry per bad condition. */
async function checkFilter(db: Db, teamId: string, raw: unknown): Promise<SegmentFilter> {
  const shape = readFilterShape(raw);
  if (shape.errors.length === 0) {
    const named = namedInFilter(shape);
    const properties = await contactPropertiesRepo(db).byKeys(teamId, named.propertyKeys);
    const liveTopics = await segmentsRepo(db).topicDefaults(teamId, named.topicIds);
    judgeConditions(shape, { properties: new Map(properties.map((p) => [p.key_fold, p])), liveTopics: new Set(liveTopics.keys()) });
  }
  if (shape.errors.length > 0) throw filterRefused(shape.errors);
  return shape.filter;
}

function filterRefused(errors: FieldError[]): ServiceError {
  const message = errors.length === 1 ? errors[0]!.message : `The filter has ${errors.length} errors; see \`errors\`.`;
  return new ServiceError(422, 'validation_error', message, { errors });
}

/** A `{contact}` path parameter: the contact id or its address (case-insensitive). */
async function findContact(db: Db, teamId: string, ref: string): Promise<ContactRow> {
  let row: ContactRow | undefined;
  if (looksLikeId(ref)) row = await contactsRepo(db).byId(teamId, ref.toLowerCase());
  else if (isBareAddress(ref.trim())) row = await contactsRepo(db).byEmailKey(teamId, suppressionKey(ref));
  else throw invalidParameter('contact', 'The path must name a contact id or an email address.');
  if (!row) throw notFound('Contact');
  return row;
}
