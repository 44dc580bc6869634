import type { Db } from '../../storage/sql/index.js';
import { topicsRepo, type TopicRow, type TopicSubscription, type TopicsRepo } from '../../storage/repos/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import { isoNow, type Clock } from '../clock.js';
import { invalidParameter, missingField, notFound, validationError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';

export const TOPIC_NAME_MAX = 50;
export const TOPIC_DESCRIPTION_MAX = 200;

export type TopicVisibility = TopicRow['visibility'];

export interface TopicView {
  object: 'topic';
  id: string;
  name: string;
  description: string | null;
  default_subscription: TopicSubscription;
  visibility: TopicVisibility;
  created_at: string;
}

export type TopicListItem = Omit<TopicView, 'object'>;

export interface CreateTopicInput {
  name?: string;
  default_subscription?: TopicSubscription;
  description?: string | null;
  visibility?: TopicVisibility;
}

export interface UpdateTopicInput {
  /** Accepted when equal to the path id (the SDK sends it). */
  id?: string;
  name?: string;
  description?: string | null;
  visibility?: TopicVisibility;
  /** Fixed at creation: accepted only when unchanged. */
  default_subscription?: TopicSubscription;
}

type Ref = { object: 'topic'; id: string };

export function topicsService(deps: { db: Db; clock: Clock }) {
  const repo = topicsRepo(deps.db);
  return {
    async create(teamId: string, input: CreateTopicInput): Promise<Ref> {
      const name = checkName(input.name);
      if (input.default_subscription === undefined) throw missingField('default_subscription');
      const at = isoNow(deps.clock);
      const row: TopicRow = {
        id: newId(), team_id: teamId, name, name_key: nameKey(name), description: checkDescription(input.description) ?? null,
        default_subscription: input.default_subscription, visibility: input.visibility ?? 'private', created_at: at, updated_at: at, deleted_at: null,
      };
      if (!(await inWriteTransaction(deps.db, (trx) => topicsRepo(trx).insertIfAbsent(row)))) throw duplicateName(name);
      return { object: 'topic', id: row.id };
    },

    async list(teamId: string, query: RawPageQuery): Promise<ListEnvelope<TopicListItem>> {
      const page = await repo.list(teamId, parsePageQuery(query));
      return listOf(page.data.map(listItem), page.has_more);
    },

    async get(teamId: string, id: string): Promise<TopicView> {
      return { object: 'topic', ...listItem(await find(repo, teamId, id)) };
    },

    async update(teamId: string, id: string, input: UpdateTopicInput): Promise<Ref> {
      const topic = await find(repo, teamId, id);
      if (input.id !== undefined && input.id.toLowerCase() !== topic.id) throw invalidParameter('id', 'The `id` in the body must be the topic\'s own id.');
      if (input.default_subscription !== undefined && input.default_subscription !== topic.default_subscription) {
        throw validationError(422, 'default_subscription', 'A topic\'s `default_subscription` is fixed at creation; create another topic instead.');
      }
      const change: Parameters<TopicsRepo['update']>[2] = { updated_at: isoNow(deps.clock) };
      if (input.name !== undefined) {
        change.name = checkName(input.name);
        change.name_key = nameKey(change.name);
      }
      if (input.description !== undefined) change.description = checkDescription(input.description) ?? null;
      if (input.visibility !== undefined) change.visibility = input.visibility;
      await inWriteTransaction(deps.db, async (trx) => {
        const inTrx = topicsRepo(trx);
        if (change.name_key !== undefined && change.name_key !== topic.name_key) {
          const other = await inTrx.liveByNameKey(teamId, change.name_key);
          if (other && other.id !== topic.id) throw duplicateName(change.name!);
        }
        await inTrx.update(teamId, topic.id, change);
      });
      return { object: 'topic', id: topic.id };
    },

    /** Soft: the topic is gone for every read and its name is free; choices stay with it. */
    async remove(teamId: string, id: string): Promise<Ref & { deleted: true }> {
      const topic = await find(repo, teamId, id);
      if (!(await inWriteTransaction(deps.db, (trx) => topicsRepo(trx).markDeleted(teamId, topic.id, isoNow(deps.clock))))) throw notFound('Topic');
      return { object: 'topic', id: topic.id, deleted: true };
    },
  };
}

export type TopicsService = ReturnType<typeof topicsService>;

const listItem = (row: TopicRow): TopicListItem => ({
  id: row.id, name: row.name, description: row.description, default_subscription: row.default_subscription,
  visibility: row.visibility, created_at: row.created_at,
});

async function find(repo: TopicsRepo, teamId: string, id: string): Promise<TopicRow> {
  const row = looksLikeId(id) ? await repo.byId(teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound('Topic');
  return row;
}

/** Live names compare trimmed and case-insensitively: "News" and "news " are one topic. */
const nameKey = (name: string) => name.trim().toLowerCase();

const duplicateName = (name: string) => invalidParameter('name', `A topic named "${name}" already exists.`);

function checkName(name: string | undefined): string {
  if (name === undefined) throw missingField('name');
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > TOPIC_NAME_MAX) throw validationError(422, 'name', `A topic name is 1-${TOPIC_NAME_MAX} characters.`);
  return trimmed;
}

function checkDescription(description: string | null | undefined): string | null | undefined {
  if (description === undefined || description === null) return description;
  if (description.length > TOPIC_DESCRIPTION_MAX) throw validationError(422, 'description', `A topic description is at most ${TOPIC_DESCRIPTION_MAX} characters.`);
  return description;
}
