import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { BroadcastLinkRow } from './broadcasts-tables.js';
import { insertMark } from './broadcasts.js';

// Engagement as it is recorded (migration 029): each recipient's opens and clicks, its complaint,
// and the clicks per link of a broadcast. Written by tracking's group-committed batches of hits and
// by the complaint recorder; read by the broadcast lists.

/** What one batch of hits adds to one recipient. The times are the batch's first of each kind. */
export interface RecipientEngagementDelta {
  recipientId: string;
  opens: number;
  machineOpens: number;
  clicks: number;
  machineClicks: number;
  firstOpenedAt: string | null;
  firstHumanOpenedAt: string | null;
  firstClickedAt: string | null;
  firstHumanClickedAt: string | null;
}

/** What one batch of hits adds to one link of one broadcast email. */
export interface LinkClickDelta {
  broadcastId: string;
  teamId: string;
  emailId: string;
  url: string;
  clicks: number;
  machineClicks: number;
  /** The link's cursor if this is its first click (time-ordered, from the caller). */
  newLinkId: string;
}

/** A clicker's links (GET /broadcasts/{id}/recipients?type=clicked). */
export interface RecipientLinkClicks {
  url: string;
  clicks: number;
  machine_clicks: number;
}

/** 32 hex characters of SHA-256: a link's key within its broadcast. */
export const linkKeyOf = (url: string): string => createHash('sha256').update(url, 'utf8').digest('hex').slice(0, 32);

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const countColumns = ['opens', 'machine_opens', 'clicks', 'machine_clicks'] as const;
const deltaOf = { opens: 'opens', machine_opens: 'opens', clicks: 'clicks', machine_clicks: 'clicks' } as const;
const timeColumns = ['first_opened_at', 'first_human_opened_at', 'first_clicked_at', 'first_human_clicked_at'] as const;
const plus = (column: string, n: number | string) => sql<number>`${sql.ref(column)} + ${n}`;
const firstOf = (column: string, at: string) => sql<string>`coalesce(${sql.ref(column)}, ${at})`;

export function engagementRepo(db: Db) {
  /** One link and email: its row (a new one is a new clicker), then the link's sums. */
  async function addLinkClick(d: LinkClickDelta): Promise<void> {
    const linkKey = linkKeyOf(d.url);
    const key = { broadcast_id: d.broadcastId, email_id: d.emailId, link_key: linkKey };
    const created = await db.insertInto('broadcast_link_clicks').values({ ...key, clicks: 0, machine_clicks: 0 })
      .onConflict((oc) => oc.columns(['broadcast_id', 'email_id', 'link_key']).doNothing()).returning('email_id').executeTakeFirst();
    // The row's counts after the add tell whether this batch brought its first click no machine
    // made; read in the same statement, so two writers cannot both see "first".
    const after = await db.updateTable('broadcast_link_clicks')
      .set({ clicks: plus('clicks', d.clicks), machine_clicks: plus('machine_clicks', d.machineClicks) })
      .where('broadcast_id', '=', d.broadcastId).where('email_id', '=', d.emailId).where('link_key', '=', linkKey)
      .returning(['clicks', 'machine_clicks']).executeTakeFirstOrThrow();
    const humanAfter = Number(after.clicks) - Number(after.machine_clicks);
    const humanBefore = humanAfter - (d.clicks - d.machineClicks);
    const row: BroadcastLinkRow = {
      broadcast_id: d.broadcastId, link_key: linkKey, id: d.newLinkId, team_id: d.teamId, url: d.url,
      clicks: d.clicks, machine_clicks: d.machineClicks,
      unique_clicks: created ? 1 : 0, unique_human_clicks: humanBefore === 0 && humanAfter > 0 ? 1 : 0,
    };
    const summed = (column: 'clicks' | 'machine_clicks' | 'unique_clicks' | 'unique_human_clicks') =>
      sql<number>`${sql.ref(`broadcast_links.${column}`)} + ${sql.ref(`excluded.${column}`)}`;
    await db.insertInto('broadcast_links').values(row).onConflict((oc) => oc.columns(['broadcast_id', 'link_key']).doUpdateSet({
      clicks: summed('clicks'), machine_clicks: summed('machine_clicks'),
      unique_clicks: summed('unique_clicks'), unique_human_clicks: summed('unique_human_clicks'),
    })).execute();
  }

  return {
    /**
     * Adds a batch's opens and clicks to each recipient; first times are kept once set. Rows are
     * written in key order, here and in addLinkClicks, so two processes' batches on PostgreSQL take
     * their row locks in one order and cannot deadlock.
     */
    async addRecipientEngagement(deltas: readonly RecipientEngagementDelta[]): Promise<void> {
      for (const d of [...deltas].sort((a, b) => compare(a.recipientId, b.recipientId))) {
        const values: Record<string, unknown> = {
          opens: d.opens, machine_opens: d.machineOpens, clicks: d.clicks, machine_clicks: d.machineClicks, id: d.recipientId,
          first_opened_at: d.firstOpenedAt, first_human_opened_at: d.firstHumanOpenedAt,
          first_clicked_at: d.firstClickedAt, first_human_clicked_at: d.firstHumanClickedAt,
        };
        const counts = countColumns.filter((column) => d[deltaOf[column]] !== 0);
        const times = timeColumns.filter((column) => values[column] !== null);
        if (counts.length + times.length === 0) continue;
        // One compiled statement per set of columns a batch moves (a hit of one kind moves 2 + 2).
        const update = shapedStatement(db, `engagement.recipient ${counts.join(',')};${times.join(',')}`, (m) => db.updateTable('email_recipients')
          .set(Object.fromEntries([
            ...counts.map((column) => [column, plus(column, m(column))]),
            ...times.map((column) => [column, firstOf(column, m(column))]),
          ])).where('id', '=', m('id')));
        await update(db, values);
      }
    },

    /** Adds a batch's clicks per link and broadcast email (deltas already summed per link and email). */
    async addLinkClicks(deltas: readonly LinkClickDelta[]): Promise<void> {
      const keyed = deltas.map((d) => ({ d, order: `${d.broadcastId} ${linkKeyOf(d.url)} ${d.emailId}` }));
      for (const { d } of keyed.sort((a, b) => compare(a.order, b.order))) await addLinkClick(d);
    },

    /**
     * A complaint about the message for this recipient (the first one's time is kept); for a
     * broadcast's email also the broadcast's `complained` mark. The recipient's contact is found
     * by its address (the contacts' unique key) and checked against the broadcast's row for this
     * email; a contact whose address changed since is looked for among the broadcast's rows.
     */
    async markComplained(recipientId: string, at: string): Promise<void> {
      await db.updateTable('email_recipients').set({ complained_at: firstOf('complained_at', at) }).where('id', '=', recipientId).execute();
      const sent = await db.selectFrom('email_recipients as r').innerJoin('emails as e', 'e.id', 'r.email_id')
        .select(['r.email_id', 'r.address', 'e.team_id', 'e.broadcast_id']).where('r.id', '=', recipientId).executeTakeFirst();
      if (!sent?.broadcast_id) return;
      const member = (await db.selectFrom('broadcast_recipients as b').innerJoin('contacts as c', 'c.id', 'b.contact_id').select('b.contact_id')
        .where('c.team_id', '=', sent.team_id).where('c.email_key', '=', sent.address.toLowerCase())
        .where('b.broadcast_id', '=', sent.broadcast_id).where('b.email_id', '=', sent.email_id).executeTakeFirst())
        ?? await db.selectFrom('broadcast_recipients').select('contact_id').where('broadcast_id', '=', sent.broadcast_id).where('email_id', '=', sent.email_id).executeTakeFirst();
      if (member) await insertMark(db, { broadcast_id: sent.broadcast_id, kind: 'complained', contact_id: member.contact_id, team_id: sent.team_id, created_at: at });
    },

    /** A broadcast's links, newest first clicked first; `humanOnly`: links a person clicked. */
    linksPage(broadcastId: string, humanOnly: boolean, page: PageQuery): Promise<Page<BroadcastLinkRow>> {
      let q = db.selectFrom('broadcast_links').selectAll().where('broadcast_id', '=', broadcastId);
      if (humanOnly) q = q.where('unique_human_clicks', '>', 0);
      return paginate(db, q, 'id', page);
    },

    /** The links each of these broadcast emails' recipients clicked, in the order first clicked. */
    async linksOfEmails(broadcastId: string, emailIds: readonly string[]): Promise<Map<string, RecipientLinkClicks[]>> {
      const out = new Map<string, RecipientLinkClicks[]>();
      if (emailIds.length === 0) return out;
      const rows = await db.selectFrom('broadcast_link_clicks as c')
        .innerJoin('broadcast_links as l', (j) => j.onRef('l.broadcast_id', '=', 'c.broadcast_id').onRef('l.link_key', '=', 'c.link_key'))
        .select(['c.email_id', 'l.url', 'c.clicks', 'c.machine_clicks'])
        .where('c.broadcast_id', '=', broadcastId).where('c.email_id', 'in', [...emailIds]).orderBy('l.id').execute();
      for (const r of rows) {
        let list = out.get(r.email_id);
        if (!list) out.set(r.email_id, (list = []));
        list.push({ url: r.url, clicks: Number(r.clicks), machine_clicks: Number(r.machine_clicks) });
      }
      return out;
    },
  };
}

export type EngagementRepo = ReturnType<typeof engagementRepo>;
