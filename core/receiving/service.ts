import type { Readable } from 'node:stream';
import type { Db } from '../../storage/sql/index.js';
import { receivedRepo, type ReceivedAttachmentRow, type ReceivedEmailRow } from '../../storage/repos/index.js';
import type { SecretBox } from '../../storage/files/index.js';
import type { Spool } from '../../storage/files/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { invalidParameter, notFound } from '../errors.js';
import { looksLikeId } from '../ids.js';
import type { Logger } from '../logger.js';
import { listOf, parsePageQuery, parseSearch, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { parseInstant } from '../time.js';
import { openDownload, signDownload, type DownloadTarget } from './links.js';
import { htmlWithDataUris, readAttachment } from './message.js';
import { attachmentMeta, emailView, listItem, type ReceivedAttachmentView, type ReceivedEmailView, type ReceivedListItem } from './views.js';

export interface ListReceivedQuery extends RawPageQuery {
  search?: string;
  start_date?: string;
  end_date?: string;
}

export interface GetReceivedOptions {
  html_format?: string;
}

/** A file the public download route sends: type already passed through the allowlist. */
export interface Download {
  filename: string;
  contentType: string;
  size: number;
  body: Buffer | Readable;
}

export interface ReceivingServiceDeps {
  db: Db;
  spool: Spool;
  secretBox: SecretBox;
  clock: Clock;
  logger: Logger;
  /** scheme://host of signed links (core/link-base.ts); throws when none can be made. */
  linkBase: () => string;
}

/** The path (after the base URL) of a signed download. */
export const downloadPath = (token: string) => `/downloads/received/${token}`;

// Types a browser may be handed as they are; everything else (text/html, image/svg+xml, scripts,
// XML, unknown) is served as application/octet-stream. Every download is Content-Disposition:
// attachment with nosniff either way.
const servedAsIs = new Set([
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/tiff', 'image/heic', 'image/avif',
  'application/pdf', 'text/plain', 'text/csv', 'text/calendar', 'application/zip', 'application/gzip',
  'audio/mpeg', 'audio/ogg', 'audio/wav', 'video/mp4', 'video/webm', 'video/quicktime',
  'application/msword', 'application/vnd.ms-excel', 'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text', 'application/vnd.oasis.opendocument.spreadsheet',
  'application/pgp-signature', 'application/pkcs7-signature', 'application/pgp-encrypted',
]);

export const servedContentType = (contentType: string): string => {
  const bare = contentType.split(';')[0]!.trim().toLowerCase();
  return servedAsIs.has(bare) ? bare : 'application/octet-stream';
};

export function receivingService(deps: ReceivingServiceDeps) {
  const repo = receivedRepo(deps.db);
  const findEmail = async (teamId: string, id: string): Promise<ReceivedEmailRow> => {
    const row = looksLikeId(id) ? await repo.byId(teamId, id.toLowerCase()) : undefined;
    if (!row) throw notFound('Email');
    return row;
  };
  const link = (baseUrl: string, target: DownloadTarget) => {
    const signed = signDownload(deps.secretBox, target, deps.clock.now());
    return { download_url: baseUrl + downloadPath(signed.token), expires_at: signed.expiresAt.toISOString() };
  };
  const attachmentView = (baseUrl: string, row: ReceivedAttachmentRow): ReceivedAttachmentView => ({
    object: 'attachment', ...attachmentMeta(row), ...link(baseUrl, { kind: 'attachment', emailId: row.email_id, attachmentId: row.id }),
  });

  return {
    async list(teamId: string, query: ListReceivedQuery): Promise<ListEnvelope<ReceivedListItem>> {
      const page = parsePageQuery(query);
      const startDate = query.start_date === undefined ? undefined : parseInstant('start_date', query.start_date);
      const endDate = query.end_date === undefined ? undefined : parseInstant('end_date', query.end_date);
      if (startDate && endDate && endDate < startDate) throw invalidParameter('end_date', 'The `end_date` must not be before `start_date`.');
      const search = parseSearch(query.search)?.toLowerCase();
      const result = await repo.list(teamId, { search, startDate, endDate }, page);
      const attachments = await repo.attachmentsOf(result.data.map((r) => r.id));
      return listOf(result.data.map((row) => listItem(row, attachments.filter((a) => a.email_id === row.id))), result.has_more);
    },

    async get(teamId: string, id: string, options: GetReceivedOptions): Promise<ReceivedEmailView> {
      const format = options.html_format ?? 'cid';
      if (format !== 'cid' && format !== 'data_uri') throw invalidParameter('html_format', 'The `html_format` parameter must be `cid` or `data_uri`.');
      const row = await findEmail(teamId, id);
      const attachments = await repo.attachmentsOf([row.id]);
      const raw = row.raw_key ? link(deps.linkBase(), { kind: 'raw', emailId: row.id }) : null;
      let html = row.html;
      if (format === 'data_uri' && html !== null && row.raw_key && attachments.some((a) => a.content_id)) {
        html = await htmlWithDataUris(await deps.spool.read(row.raw_key));
      }
      return emailView(row, attachments, raw, html);
    },

    async listAttachments(teamId: string, emailId: string, query: RawPageQuery): Promise<ListEnvelope<ReceivedAttachmentView>> {
      const page = parsePageQuery(query);
      const row = await findEmail(teamId, emailId);
      let parts = await repo.attachmentsOf([row.id]);
      if (page.after) parts = parts.slice(parts.findIndex((p) => p.id === page.after) + 1);
      if (page.before) parts = parts.slice(0, Math.max(0, parts.findIndex((p) => p.id === page.before)));
      const data = page.before ? parts.slice(-page.limit) : parts.slice(0, page.limit);
      const baseUrl = deps.linkBase();
      return listOf(data.map((p) => attachmentView(baseUrl, p)), parts.length > data.length);
    },

    async getAttachment(teamId: string, emailId: string, attachmentId: string): Promise<ReceivedAttachmentView> {
      const row = await findEmail(teamId, emailId);
      const part = looksLikeId(attachmentId) ? await repo.attachment(teamId, row.id, attachmentId.toLowerCase()) : undefined;
      if (!part) throw notFound('Attachment');
      return attachmentView(deps.linkBase(), part);
    },

    /** Removes the record, its attachments and its raw source; 404 afterwards. */
    async delete(teamId: string, id: string): Promise<{ object: 'email'; id: string; deleted: true }> {
      await findEmail(teamId, id);
      const deleted = await inTransaction(deps.db, (trx) => receivedRepo(trx).delete(teamId, id.toLowerCase()));
      if (!deleted) throw notFound('Email');
      if (deleted.raw_key) await deps.spool.remove(deleted.raw_key);
      deps.logger.info({ emailId: deleted.id, teamId }, 'received message deleted');
      return { object: 'email', id: deleted.id, deleted: true };
    },

    /** What a signed link serves; undefined (404) for a forged, expired or deleted target. */
    async download(token: string): Promise<Download | undefined> {
      const target = openDownload(deps.secretBox, token, deps.clock.now());
      if (!target) return undefined;
      const email = await repo.sourceOf(target.emailId);
      if (!email?.raw_key) return undefined;
      if (target.kind === 'raw') {
        if (!(await deps.spool.exists(email.raw_key))) return undefined;
        return { filename: `${email.id}.eml`, contentType: 'message/rfc822', size: email.raw_size, body: deps.spool.stream(email.raw_key) };
      }
      const part = await repo.attachment(email.team_id, email.id, target.attachmentId);
      if (!part) return undefined;
      const bytes = await readAttachment(await deps.spool.read(email.raw_key), part.position);
      if (!bytes || bytes.checksum !== part.checksum) return undefined;
      return { filename: part.filename ?? `attachment-${part.position + 1}`, contentType: servedContentType(part.content_type), size: bytes.content.length, body: bytes.content };
    },
  };
}

export type ReceivingService = ReturnType<typeof receivingService>;
