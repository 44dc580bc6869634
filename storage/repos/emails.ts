import { sql } from 'kysely';
import { insertRows } from '../sql/chunked.js';
import { shapedRows, shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { likeOperator } from '../sql/dialect.js';
import type { EmailAttachmentRow, EmailRecipientRow, EmailRow, EmailTagRow } from './emails-tables.js';
import { containsPattern, paginate, type Page, type PageQuery } from '../sql/paginate.js';

export type { EmailAttachmentRow, EmailRecipientRow, EmailRow, EmailTagRow };

export interface AcceptedEmail {
  email: EmailRow;
  recipients: EmailRecipientRow[];
  tags: EmailTagRow[];
  attachments: EmailAttachmentRow[];
}

export interface EmailFilter {
  /** A lifecycle name (last_event). */
  status?: string;
  apiKeyId?: string;
  /** Inclusive bounds on created_at (ISO text). */
  startDate?: string;
  endDate?: string;
  /** Lower-cased text matched in subject, sender and recipients. */
  search?: string;
  /** Every tag must be present; a tag without value matches any value. */
  tags?: { name: string; value?: string }[];
}

/** The list columns: no bodies. */
export type EmailListRow = Omit<EmailRow, 'html' | 'text'>;

export interface EmailsRepo {
  insertAccepted(accepted: AcceptedEmail): Promise<void>;
  /** Accepted emails with their recipients, tags and attachments, in multi-row statements across the emails (a batch, a campaign page). */
  insertAcceptedMany(accepted: readonly AcceptedEmail[]): Promise<void>;
  byId(teamId: string, id: string): Promise<EmailRow | undefined>;
  /** By id alone, for the delivery side (it works across teams). */
  byIdAnyTeam(id: string): Promise<EmailRow | undefined>;
  recipients(emailId: string): Promise<EmailRecipientRow[]>;
  tags(emailId: string): Promise<EmailTagRow[]>;
  attachments(emailId: string): Promise<EmailAttachmentRow[]>;
  list(teamId: string, filter: EmailFilter, page: PageQuery): Promise<Page<EmailListRow>>;
  /** People reached today by the same message without unsubscribe (the bulk rule). */
  bulkRecipients(teamId: string, contentHash: string, since: string): Promise<number>;
  bulkWarned(teamId: string, contentHash: string, day: string): Promise<boolean>;
  recordBulkWarning(teamId: string, contentHash: string, day: string, at: string): Promise<boolean>;
  /** Evidence for dead_address: svc's own attempt met a permanent "no such mailbox" reply. */
  recordRejection(address: string, teamId: string, at: string): Promise<void>;
  /**
   * Teams whose own attempts met a "no such mailbox" reply for this address since a time: whether
   * this team is one of them, and how many there are in all.
   */
  rejections(address: string, teamId: string, since: string): Promise<{ own: boolean; teams: number }>;
  /** `rejections` for many addresses at once: each rejected address with the teams it was rejected for. */
  rejectionsOf(addresses: readonly string[], since: string): Promise<{ address: string; team_id: string }[]>;
  setLastEvent(emailId: string, lastEvent: string, at: string): Promise<void>;
}

const listColumns = [
  'id', 'team_id', 'api_key_id', 'domain_id', 'region', 'from_header', 'from_email', 'to_json', 'cc_json', 'bcc_json',
  'reply_to_json', 'subject', 'headers_json', 'tags_json', 'topic_id', 'template_id', 'template_version', 'message_id',
  'scheduled_at', 'status', 'last_event', 'recipients_text', 'recipient_count', 'content_hash', 'has_unsubscribe',
  'attachment_count', 'created_at', 'updated_at',
] as const;

export function emailsRepo(db: Db): EmailsRepo {
  async function insertAcceptedMany(accepted: readonly AcceptedEmail[]): Promise<void> {
    // Chunked statements compiled once (sql/chunked.ts): building a multi-row INSERT of a campaign
    // page's 500 emails through the query builder cost a tenth of the fan-out's CPU.
    await insertRows(db, 'emails', accepted.map((a) => a.email));
    await insertRows(db, 'email_recipients', accepted.flatMap((a) => a.recipients));
    await insertRows(db, 'email_tags', accepted.flatMap((a) => a.tags));
    for (const a of accepted) for (const part of a.attachments) await db.insertInto('email_attachments').values(part).execute();
  }
  return {
    insertAccepted: (accepted) => insertAcceptedMany([accepted]),
    insertAcceptedMany,
    byId: (teamId, id) => db.selectFrom('emails').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    // Compiled once, as the send path's reads below: the outbound process reads each email it delivers.
    byIdAnyTeam: async (id) => (await shapedRows<EmailRow>(db, 'emails.byIdAnyTeam', (m) => db.selectFrom('emails').selectAll()
      .where('id', '=', m('id')), { id }))[0],
    recipients: (emailId) => db.selectFrom('email_recipients').selectAll().where('email_id', '=', emailId).orderBy('idx').execute(),
    tags: (emailId) => db.selectFrom('email_tags').selectAll().where('email_id', '=', emailId).execute(),
    attachments: (emailId) => db.selectFrom('email_attachments').selectAll().where('email_id', '=', emailId).orderBy('idx').execute(),
    list(teamId, filter, page) {
      let q = db.selectFrom('emails').select(listColumns).where('team_id', '=', teamId);
      if (filter.status !== undefined) q = q.where('last_event', '=', filter.status);
      if (filter.apiKeyId !== undefined) q = q.where('api_key_id', '=', filter.apiKeyId);
      if (filter.startDate !== undefined) q = q.where('created_at', '>=', filter.startDate);
      if (filter.endDate !== undefined) q = q.where('created_at', '<=', filter.endDate);
      if (filter.search !== undefined) {
        const pattern = containsPattern(filter.search);
        q = q.where(sql<boolean>`(svc_casefold(subject) like ${pattern} escape '\\' or svc_casefold(from_header) like ${pattern} escape '\\' or recipients_text ${sql.raw(likeOperator(db))} ${pattern} escape '\\')`);
      }
      for (const tag of filter.tags ?? []) {
        q = q.where(({ exists, selectFrom }) => {
          let sub = selectFrom('email_tags').select('email_tags.email_id').whereRef('email_tags.email_id', '=', 'emails.id').where('email_tags.name', '=', tag.name);
          if (tag.value !== undefined) sub = sub.where('email_tags.value', '=', tag.value);
          return exists(sub);
        });
      }
      return paginate(db, q, 'id', page);
    },
    async bulkRecipients(teamId, contentHash, since) {
      const [row] = await shapedRows<{ n: number }>(db, 'emails.bulkRecipients', (m) => db.selectFrom('emails')
        .select(sql<number>`coalesce(sum(recipient_count), 0)`.as('n'))
        .where('team_id', '=', m('team')).where('content_hash', '=', m('hash')).where('created_at', '>=', m('since'))
        // A literal, not a bound value: the partial index emails_bulk_counted (migration 032) is
        // used only when the query states its condition as written.
        .where(sql<boolean>`has_unsubscribe = 0`).where('status', '!=', m('canceled') as EmailRow['status']),
      { team: teamId, hash: contentHash, since, canceled: 'canceled' });
      return Number(row?.n ?? 0);
    },
    async bulkWarned(teamId, contentHash, day) {
      const row = await db.selectFrom('bulk_warnings').select('day').where('team_id', '=', teamId)
        .where('content_hash', '=', contentHash).where('day', '=', day).executeTakeFirst();
      return !!row;
    },
    async recordBulkWarning(teamId, contentHash, day, at) {
      const r = await db.insertInto('bulk_warnings').values({ team_id: teamId, content_hash: contentHash, day, warned_at: at })
        .onConflict((oc) => oc.doNothing()).executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async recordRejection(address, teamId, at) {
      await db.insertInto('rejected_addresses').values({ address, team_id: teamId, rejected_at: at })
        .onConflict((oc) => oc.columns(['address', 'team_id']).doUpdateSet({ rejected_at: at })).execute();
    },
    async rejections(address, teamId, since) {
      const rows = await shapedRows<{ team_id: string }>(db, 'emails.rejections', (m) => db.selectFrom('rejected_addresses')
        .select('team_id').where('address', '=', m('address')).where('rejected_at', '>=', m('since')), { address, since });
      return { own: rows.some((r) => r.team_id === teamId), teams: rows.length };
    },
    async rejectionsOf(addresses, since) {
      const rows: { address: string; team_id: string }[] = [];
      for (let i = 0; i < addresses.length; i += 500) {
        rows.push(...await db.selectFrom('rejected_addresses').select(['address', 'team_id']).where('address', 'in', addresses.slice(i, i + 500))
          .where('rejected_at', '>=', since).execute());
      }
      return rows;
    },
    async setLastEvent(emailId, lastEvent, at) {
      const update = shapedStatement(db, 'setLastEvent', (m) => db.updateTable('emails').set({ last_event: m('last_event'), updated_at: m('at') }).where('id', '=', m('id')));
      await update(db, { last_event: lastEvent, at, id: emailId });
    },
  };
}
