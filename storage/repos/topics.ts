import type { Db } from '../sql/db.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { TopicRow, TopicSubscription } from './contacts-tables.js';

export type { TopicRow, TopicSubscription };

/** A live topic with the contact's own choice, if it made one. */
export type TopicWithChoice = TopicRow & { choice: TopicSubscription | null };

export type TopicChange = Partial<Pick<TopicRow, 'name' | 'name_key' | 'description' | 'visibility'>> & { updated_at: string };

export interface TopicsRepo {
  /** Inserts unless a live topic of the team has the name; answers whether it inserted. */
  insertIfAbsent(row: TopicRow): Promise<boolean>;
  /** A live topic. */
  byId(teamId: string, id: string): Promise<TopicRow | undefined>;
  /** Live topics among these ids. */
  byIds(teamId: string, ids: readonly string[]): Promise<TopicRow[]>;
  liveByNameKey(teamId: string, nameKey: string): Promise<TopicRow | undefined>;
  list(teamId: string, page: PageQuery): Promise<Page<TopicRow>>;
  update(teamId: string, id: string, change: TopicChange): Promise<void>;
  /** Soft delete: the name is free again; choices and consent records keep their topic. */
  markDeleted(teamId: string, id: string, at: string): Promise<boolean>;
  /** The team's live topics with this contact's choices, a page at a time. */
  listForContact(teamId: string, contactId: string, page: PageQuery): Promise<Page<TopicWithChoice>>;
  /** Every live topic of the team with the contact's own choice (null where it made none). */
  allForContact(teamId: string, contactId: string): Promise<TopicWithChoice[]>;
}

export function topicsRepo(db: Db): TopicsRepo {
  const live = () => db.selectFrom('topics').selectAll().where('deleted_at', 'is', null);
  return {
    async insertIfAbsent(row) {
      const result = await db.insertInto('topics').values(row)
        .onConflict((oc) => oc.columns(['team_id', 'name_key']).where('deleted_at', 'is', null).doNothing()).executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    byId: (teamId, id) => live().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    byIds: async (teamId, ids) => ids.length === 0 ? [] : live().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute(),
    liveByNameKey: (teamId, nameKey) => live().where('team_id', '=', teamId).where('name_key', '=', nameKey).executeTakeFirst(),
    list: (teamId, page) => paginate(db, live().where('team_id', '=', teamId), 'id', page),
    async update(teamId, id, change) {
      await db.updateTable('topics').set(change).where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).execute();
    },
    async markDeleted(teamId, id, at) {
      const r = await db.updateTable('topics').set({ deleted_at: at, updated_at: at })
        .where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    listForContact: (teamId, contactId, page) => paginate(db, db.selectFrom('topics as t')
      .leftJoin('contact_topics as c', (j) => j.onRef('c.topic_id', '=', 't.id').on('c.contact_id', '=', contactId))
      .selectAll('t').select('c.subscription as choice')
      .where('t.team_id', '=', teamId).where('t.deleted_at', 'is', null), 't.id', page),
    allForContact: (teamId, contactId) => db.selectFrom('topics as t')
      .leftJoin('contact_topics as c', (j) => j.onRef('c.topic_id', '=', 't.id').on('c.contact_id', '=', contactId))
      .selectAll('t').select('c.subscription as choice')
      .where('t.team_id', '=', teamId).where('t.deleted_at', 'is', null).orderBy('t.id').execute(),
  };
}
