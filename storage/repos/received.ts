import { sql } from 'kysely';
import { insertRows } from '../sql/chunked.js';
import { shapedRows, shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { likeOperator } from '../sql/dialect.js';
import { containsPattern, paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { ReceivedAttachmentRow, ReceivedEmailRow, ReceivedReportRow } from './received-tables.js';

export type { DroppedReason, ReceivedAttachmentRow, ReceivedEmailRow, ReceivedReportRow, ScanStatus } from './received-tables.js';

export interface ReceivedFilter {
  /** Already lower-cased; matched inside search_text. */
  search?: string;
  /** Inclusive bounds on created_at (ISO 8601 UTC text). */
  startDate?: string;
  endDate?: string;
}

/** What a list shows: the record without bodies and headers. */
export type ReceivedSummary = Omit<ReceivedEmailRow, 'html' | 'text' | 'headers_json' | 'auth_json' | 'search_text'>;

export interface ReceivedRepo {
  insert(row: ReceivedEmailRow, attachments: readonly ReceivedAttachmentRow[]): Promise<void>;
  byId(teamId: string, id: string): Promise<ReceivedEmailRow | undefined>;
  /** Where a record's raw source is, whatever the team (signed download links name only the id). */
  sourceOf(id: string): Promise<Pick<ReceivedEmailRow, 'id' | 'team_id' | 'raw_key' | 'raw_size'> | undefined>;
  list(teamId: string, filter: ReceivedFilter, page: PageQuery): Promise<Page<ReceivedSummary>>;
  attachmentsOf(emailIds: readonly string[]): Promise<ReceivedAttachmentRow[]>;
  attachment(teamId: string, emailId: string, attachmentId: string): Promise<ReceivedAttachmentRow | undefined>;
  /** Deletes the record and its attachments; answers the deleted row (for its raw file). */
  delete(teamId: string, id: string): Promise<ReceivedEmailRow | undefined>;
  /** Kept (not dropped) messages of the team since an instant: the daily cap. */
  keptSince(teamId: string, since: string): Promise<number>;
  keptBytes(teamId: string): Promise<number>;
  addUsage(teamId: string, bytes: number, count: number): Promise<void>;
  insertReport(row: ReceivedReportRow): Promise<void>;
  reportsOf(emailId: string): Promise<ReceivedReportRow[]>;
}

const summaryColumns = [
  'id', 'team_id', 'domain_id', 'created_at', 'message_id', 'subject', 'from_text', 'from_address', 'from_name',
  'to_json', 'cc_json', 'bcc_json', 'reply_to_json', 'received_for_json', 'dropped_reason', 'raw_key', 'raw_size',
  'envelope_from', 'client_ip', 'client_helo', 'scan_status', 'scan_signature',
] as const;

export function receivedRepo(db: Db): ReceivedRepo {
  const repo: ReceivedRepo = {
    // The statements of every received message are compiled once (sql/compiled.ts, chunked.ts):
    // building them per message was a few % of the inbound process's CPU.
    async insert(row, attachments) {
      await insertRows(db, 'received_emails', [row]);
      if (attachments.length > 0) await insertRows(db, 'received_attachments', attachments);
      if (row.dropped_reason === null) await repo.addUsage(row.team_id, row.raw_size, 1);
    },
    byId: (teamId, id) =>
      db.selectFrom('received_emails').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    sourceOf: (id) =>
      db.selectFrom('received_emails').select(['id', 'team_id', 'raw_key', 'raw_size']).where('id', '=', id).executeTakeFirst(),
    list(teamId, filter, page) {
      let q = db.selectFrom('received_emails').select([...summaryColumns]).where('team_id', '=', teamId);
      if (filter.search !== undefined) q = q.where(sql<boolean>`search_text ${sql.raw(likeOperator(db))} ${containsPattern(filter.search)} escape '\\'`);
      if (filter.startDate !== undefined) q = q.where('created_at', '>=', filter.startDate);
      if (filter.endDate !== undefined) q = q.where('created_at', '<=', filter.endDate);
      return paginate(db, q, 'id', page);
    },
    async attachmentsOf(emailIds) {
      if (emailIds.length === 0) return [];
      return db.selectFrom('received_attachments').selectAll().where('email_id', 'in', [...emailIds]).orderBy('email_id').orderBy('position').execute();
    },
    attachment: (teamId, emailId, attachmentId) =>
      db.selectFrom('received_attachments').selectAll()
        .where('team_id', '=', teamId).where('email_id', '=', emailId).where('id', '=', attachmentId).executeTakeFirst(),
    async delete(teamId, id) {
      const row = await repo.byId(teamId, id);
      if (!row) return undefined;
      await db.deleteFrom('received_attachments').where('email_id', '=', id).execute();
      await db.deleteFrom('received_emails').where('id', '=', id).execute();
      if (row.dropped_reason === null) await repo.addUsage(teamId, -row.raw_size, -1);
      return row;
    },
    async keptSince(teamId, since) {
      const [r] = await shapedRows<{ n: number }>(db, 'received.keptSince', (m) => db.selectFrom('received_emails')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('team_id', '=', m('team')).where('created_at', '>=', m('since')).where('dropped_reason', 'is', null), { team: teamId, since });
      return Number(r?.n ?? 0);
    },
    async keptBytes(teamId) {
      const [r] = await shapedRows<{ kept_bytes: number }>(db, 'received.keptBytes', (m) => db.selectFrom('received_usage')
        .select('kept_bytes').where('team_id', '=', m('team')), { team: teamId });
      return Number(r?.kept_bytes ?? 0);
    },
    async addUsage(teamId, bytes, count) {
      const upsert = shapedStatement(db, 'received.addUsage', (m) => db.insertInto('received_usage')
        .values({ team_id: m('team'), kept_bytes: m('bytes') as unknown as number, kept_count: m('count') as unknown as number })
        .onConflict((oc) => oc.column('team_id').doUpdateSet({
          // Qualified: PostgreSQL finds a bare name ambiguous here (the table's or excluded's).
          kept_bytes: sql`received_usage.kept_bytes + excluded.kept_bytes`,
          kept_count: sql`received_usage.kept_count + excluded.kept_count`,
        })));
      await upsert(db, { team: teamId, bytes, count });
    },
    async insertReport(row) {
      await db.insertInto('received_reports').values(row).execute();
    },
    reportsOf: (emailId) => db.selectFrom('received_reports').selectAll().where('email_id', '=', emailId).orderBy('id').execute(),
  };
  return repo;
}
