import { sql } from 'kysely';
import type { Db } from '../sql/db.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { BroadcastRecipientMarkRow, BroadcastRecipientRow, BroadcastRow, BroadcastStatus, RecipientMarkKind } from './broadcasts-tables.js';
import type { TopicSubscription } from './contacts-tables.js';
import type { RecipientState } from './emails-tables.js';
import { insertRows } from '../sql/chunked.js';

/** Ids or keys in lists of at most 500 bound values per statement. */
const inChunks = (values: readonly string[]): string[][] => {
  const out: string[][] = [];
  for (let i = 0; i < values.length; i += 500) out.push(values.slice(i, i + 500));
  return out;
};

export type BroadcastPatch = Partial<Omit<BroadcastRow, 'id' | 'team_id' | 'created_at'>>;

/** A recipient as GET /broadcasts/{id}/recipients lists it: its row joined to its email's delivery. */
export interface BroadcastRecipientView extends BroadcastRecipientRow {
  delivery_state: string | null;
  bounce_type: string | null;
  opens: number | null;
  machine_opens: number | null;
  clicks: number | null;
  machine_clicks: number | null;
}

/** Which recipients a list asks for. */
export type RecipientSelection =
  | { kind: 'sent' }
  | { kind: 'excluded' }
  | { kind: 'delivery'; states: readonly RecipientState[]; bounceType?: string }
  /** Recipients with an open or a click recorded (`humanOnly`: one no machine made). */
  | { kind: 'engaged'; event: 'opened' | 'clicked'; humanOnly: boolean }
  /** Recipients marked complained or unsubscribed: the marks are walked, not every recipient. */
  | { kind: 'marked'; mark: RecipientMarkKind };

/** The column of the recipient's email an open or click list asks to be set. */
const engagedColumn = (humanOnly: boolean, event: 'opened' | 'clicked') =>
  event === 'opened' ? (humanOnly ? 'r.first_human_opened_at' : 'r.first_opened_at') : (humanOnly ? 'r.first_human_clicked_at' : 'r.first_clicked_at');

/** What the fan-out reads about one page of members, in a few statements. */
export interface MemberFacts {
  /** Lower-cased addresses on the team's suppression list. */
  suppressed: Set<string>;
  /** contact id → its own choice for the topic. */
  choices: Map<string, TopicSubscription>;
  /** contact id → property key → value. */
  values: Map<string, Map<string, string | number | boolean>>;
}

export interface BroadcastsRepo {
  insert(row: BroadcastRow): Promise<void>;
  byId(teamId: string, id: string): Promise<BroadcastRow | undefined>;
  list(teamId: string, page: PageQuery): Promise<Page<BroadcastRow>>;
  /** Changes the broadcast only while its status is one of `from`; answers whether it did. */
  transition(teamId: string, id: string, from: readonly BroadcastStatus[], patch: BroadcastPatch): Promise<boolean>;
  /** Deletes a draft; answers whether one was deleted. */
  removeDraft(teamId: string, id: string): Promise<boolean>;
  /** Scheduled broadcasts due by `now`, oldest first. */
  dueScheduled(now: string, limit: number): Promise<BroadcastRow[]>;
  /** Broadcasts waiting for or in their fan-out (queued or sending). */
  inFlight(limit: number): Promise<BroadcastRow[]>;
  insertRecipients(rows: readonly BroadcastRecipientRow[]): Promise<void>;
  addCounts(id: string, sent: number, excluded: number, patch: BroadcastPatch): Promise<void>;
  recipients(broadcastId: string, selection: RecipientSelection, email: string | undefined, page: PageQuery): Promise<Page<BroadcastRecipientView>>;
  memberFacts(teamId: string, contacts: readonly { id: string; email_key: string }[], topicId: string | null): Promise<MemberFacts>;
  /** Declared properties with a fallback value: key → the fallback (JSON decoded). */
  fallbacks(teamId: string): Promise<Map<string, string | number | boolean>>;
  /** Declared property keys of the team (for the content checks' variables). */
  propertyKeys(teamId: string): Promise<string[]>;
  /** The names of these broadcasts (metrics' broadcast_name). */
  names(teamId: string, ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * The contact unsubscribed through this broadcast's link: recorded when the contact is a recipient
   * the broadcast sent to (the first time kept). With `topicIds`, only when the broadcast was sent
   * for one of those topics (an opt-out of its topic on the preference page). Answers whether it was recorded.
   */
  markUnsubscribed(teamId: string, broadcastId: string, contactId: string, at: string, topicIds?: readonly string[]): Promise<boolean>;
}

const recipientEngagement = ['r.state as delivery_state', 'r.bounce_type', 'r.opens', 'r.machine_opens', 'r.clicks', 'r.machine_clicks'] as const;

/** A list of marked recipients, walked from the marks (a few among many recipients) in contact order. */
function markedRecipients(db: Db, broadcastId: string, mark: RecipientMarkKind, email: string | undefined, page: PageQuery): Promise<Page<BroadcastRecipientView>> {
  let q = db.selectFrom('broadcast_recipient_marks as m')
    .innerJoin('broadcast_recipients as b', (j) => j.onRef('b.broadcast_id', '=', 'm.broadcast_id').onRef('b.contact_id', '=', 'm.contact_id'))
    .leftJoin('email_recipients as r', (j) => j.onRef('r.email_id', '=', 'b.email_id'))
    .selectAll('b').select(recipientEngagement)
    .where('m.broadcast_id', '=', broadcastId).where('m.kind', '=', mark);
  if (email !== undefined) q = q.where('b.email', '=', email.toLowerCase());
  return paginate(db, q, 'm.contact_id', page) as Promise<Page<BroadcastRecipientView>>;
}

/** Records a mark once (the first time kept); answers whether it is new. */
export async function insertMark(db: Db, row: BroadcastRecipientMarkRow): Promise<boolean> {
  const r = await db.insertInto('broadcast_recipient_marks').values(row)
    .onConflict((oc) => oc.columns(['broadcast_id', 'kind', 'contact_id']).doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export function broadcastsRepo(db: Db): BroadcastsRepo {
  const ofTeam = (teamId: string) => db.selectFrom('broadcasts').selectAll().where('team_id', '=', teamId);
  return {
    async insert(row) {
      await db.insertInto('broadcasts').values(row).execute();
    },
    byId: (teamId, id) => ofTeam(teamId).where('id', '=', id).executeTakeFirst(),
    list: (teamId, page) => paginate(db, ofTeam(teamId), 'id', page),
    async transition(teamId, id, from, patch) {
      const r = await db.updateTable('broadcasts').set(patch).where('team_id', '=', teamId).where('id', '=', id)
        .where('status', 'in', [...from]).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async removeDraft(teamId, id) {
      const r = await db.deleteFrom('broadcasts').where('team_id', '=', teamId).where('id', '=', id).where('status', '=', 'draft').executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
    dueScheduled: (now, limit) => db.selectFrom('broadcasts').selectAll().where('status', '=', 'scheduled')
      .where('scheduled_at', '<=', now).orderBy('scheduled_at').limit(limit).execute(),
    inFlight: (limit) => db.selectFrom('broadcasts').selectAll().where('status', 'in', ['queued', 'sending']).orderBy('id').limit(limit).execute(),
    async insertRecipients(rows) {
      await insertRows(db, 'broadcast_recipients', rows);
    },
    async addCounts(id, sent, excluded, patch) {
      await db.updateTable('broadcasts').set({
        ...patch,
        recipients_sent: sql<number>`recipients_sent + ${sent}`,
        recipients_excluded: sql<number>`recipients_excluded + ${excluded}`,
      }).where('id', '=', id).execute();
    },
    recipients(broadcastId, selection, email, page) {
      if (selection.kind === 'marked') return markedRecipients(db, broadcastId, selection.mark, email, page);
      let q = db.selectFrom('broadcast_recipients as b').leftJoin('email_recipients as r', (j) => j.onRef('r.email_id', '=', 'b.email_id'))
        .selectAll('b').select(recipientEngagement)
        .where('b.broadcast_id', '=', broadcastId);
      if (selection.kind === 'sent') q = q.where('b.status', '=', 'sent');
      else if (selection.kind === 'excluded') q = q.where((eb) => eb.or([eb('b.status', '=', 'excluded'), eb('r.state', '=', 'suppressed')]));
      else if (selection.kind === 'engaged') q = q.where('b.status', '=', 'sent').where(engagedColumn(selection.humanOnly, selection.event), 'is not', null);
      else {
        q = q.where('r.state', 'in', [...selection.states]);
        if (selection.bounceType !== undefined) q = q.where('r.bounce_type', '=', selection.bounceType);
      }
      if (email !== undefined) q = q.where('b.email', '=', email.toLowerCase());
      return paginate(db, q, 'b.contact_id', page) as Promise<Page<BroadcastRecipientView>>;
    },
    async memberFacts(teamId, contacts, topicId) {
      const ids = contacts.map((c) => c.id);
      const keys = contacts.map((c) => c.email_key);
      const facts: MemberFacts = { suppressed: new Set(), choices: new Map(), values: new Map() };
      if (ids.length === 0) return facts;
      for (const part of inChunks(keys)) {
        const rows = await db.selectFrom('suppressions').select('email_key').where('team_id', '=', teamId).where('email_key', 'in', part).execute();
        for (const r of rows) facts.suppressed.add(r.email_key);
      }
      for (const part of inChunks(ids)) {
        if (topicId !== null) {
          const rows = await db.selectFrom('contact_topics').select(['contact_id', 'subscription'])
            .where('team_id', '=', teamId).where('topic_id', '=', topicId).where('contact_id', 'in', part).execute();
          for (const r of rows) facts.choices.set(r.contact_id, r.subscription);
        }
        const values = await db.selectFrom('contact_property_values as v').innerJoin('contact_properties as p', (j) => j.onRef('p.team_id', '=', 'v.team_id').onRef('p.key', '=', 'v.key'))
          .select(['v.contact_id', 'v.key', 'v.text_value', 'v.num_value', 'p.type']).where('v.team_id', '=', teamId).where('v.contact_id', 'in', part).execute();
        for (const v of values) {
          const value = v.type === 'string' ? v.text_value : v.type === 'boolean' ? v.num_value === 1 : v.num_value;
          if (value === null) continue;
          let map = facts.values.get(v.contact_id);
          if (!map) facts.values.set(v.contact_id, (map = new Map()));
          map.set(v.key, value);
        }
      }
      return facts;
    },
    async fallbacks(teamId) {
      const rows = await db.selectFrom('contact_properties').select(['key', 'fallback_value']).where('team_id', '=', teamId).where('fallback_value', 'is not', null).execute();
      return new Map(rows.map((r) => [r.key, JSON.parse(r.fallback_value!) as string | number | boolean]));
    },
    async propertyKeys(teamId) {
      const rows = await db.selectFrom('contact_properties').select('key').where('team_id', '=', teamId).execute();
      return rows.map((r) => r.key);
    },
    async markUnsubscribed(teamId, broadcastId, contactId, at, topicIds) {
      if (topicIds?.length === 0) return false;
      let sent = db.selectFrom('broadcast_recipients as b').select('b.contact_id')
        .where('b.team_id', '=', teamId).where('b.broadcast_id', '=', broadcastId).where('b.contact_id', '=', contactId).where('b.status', '=', 'sent');
      if (topicIds) {
        sent = sent.where('b.broadcast_id', 'in', db.selectFrom('broadcasts').select('id').where('team_id', '=', teamId).where('topic_id', 'in', [...topicIds]));
      }
      if (!(await sent.executeTakeFirst())) return false;
      return insertMark(db, { broadcast_id: broadcastId, kind: 'unsubscribed', contact_id: contactId, team_id: teamId, created_at: at });
    },
    async names(teamId, ids) {
      if (ids.length === 0) return new Map();
      const rows = await db.selectFrom('broadcasts').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', [...ids]).execute();
      return new Map(rows.map((r) => [r.id, r.name]));
    },
  };
}
