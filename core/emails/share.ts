import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../storage/sql/index.js';
import { emailsRepo } from '../../storage/repos/index.js';
import { emailsShareRepo, type AttachmentMeta } from '../../storage/repos/index.js';
import type { EmailRow } from '../../storage/repos/index.js';
import type { SecretBox } from '../../storage/files/index.js';
import type { Clock } from '../clock.js';
import { notFound, validationError } from '../errors.js';
import { newId } from '../ids.js';
import { looksLikeId } from '../ids.js';
import type { Logger } from '../logger.js';
import { openSentDownload, sentDownloadPath, sharePath, signSentDownload } from './links.js';

// Share links (spec, Share link) and sent attachments. A share URL is a secret returned once:
// only its SHA-256 is stored, and an unknown, expired or revoked link all look the same (404).

export const shareMaxMs = 48 * 3600_000;
const units: Record<string, number> = { s: 1000, sec: 1000, second: 1000, m: 60_000, min: 60_000, minute: 60_000, h: 3600_000, hr: 3600_000, hour: 3600_000, d: 86_400_000, day: 86_400_000 };

/** `10m`, `90 minutes`, `1 day`, `2h` → ms; at most 48 hours. */
export function parseExpiresIn(raw: string | undefined): number {
  if (raw === undefined || raw === null) return shareMaxMs;
  const m = /^\s*(\d{1,6})\s*([a-z]+?)s?\s*$/i.exec(String(raw));
  const unit = m ? units[m[2]!.toLowerCase()] : undefined;
  if (!m || !unit || Number(m[1]) === 0) throw validationError(422, 'expires_in', '`expires_in` must be a duration such as `10m`, `2 hours` or `1 day`.');
  const ms = Number(m[1]) * unit;
  if (ms > shareMaxMs) throw validationError(422, 'expires_in', '`expires_in` may be at most 48 hours.');
  return ms;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface SentAttachmentView {
  object: 'attachment';
  id: string;
  filename: string | null;
  size: number;
  content_type: string;
  content_disposition: 'attachment' | 'inline';
  content_id: string | null;
  download_url: string;
  expires_at: string;
}

export interface SharedEmail {
  email: EmailRow;
  attachments: AttachmentMeta[];
  expiresAt: string;
}

export interface ShareDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  secretBox: SecretBox;
  /** scheme://host of links (core/link-base.ts); throws when none can be made. */
  linkBase: () => string;
}

export function emailShares(deps: ShareDeps) {
  const email = async (teamId: string, id: string) => {
    const row = looksLikeId(id) ? await emailsRepo(deps.db).byId(teamId, id.toLowerCase()) : undefined;
    if (!row) throw notFound('Email');
    return row;
  };
  const attachmentView = (a: AttachmentMeta, base: string): SentAttachmentView => {
    const link = signSentDownload(deps.secretBox, a.email_id, a.id, deps.clock.now());
    return {
      object: 'attachment', id: a.id, filename: a.filename, size: a.size, content_type: a.content_type,
      content_disposition: a.disposition, content_id: a.content_id,
      download_url: base + sentDownloadPath(link.token), expires_at: link.expiresAt.toISOString(),
    };
  };
  return {
    async create(teamId: string, id: string, expiresIn: string | undefined): Promise<{ object: 'email'; id: string; url: string }> {
      const ms = parseExpiresIn(expiresIn);
      const row = await email(teamId, id);
      // Before the link is stored: a link that cannot be handed out is not made.
      const base = deps.linkBase();
      const token = randomBytes(32).toString('base64url');
      const now = deps.clock.now();
      await emailsShareRepo(deps.db).insertLink({
        id: newId(), email_id: row.id, team_id: teamId, token_hash: hashToken(token),
        expires_at: new Date(now.getTime() + ms).toISOString(), revoked_at: null, created_at: now.toISOString(),
      });
      deps.logger.info({ emailId: row.id, teamId, expiresInMs: ms }, 'share link created');
      return { object: 'email', id: row.id, url: base + sharePath(token) };
    },

    async revoke(teamId: string, id: string): Promise<{ object: 'email'; id: string; revoked: number }> {
      const row = await email(teamId, id);
      const revoked = await emailsShareRepo(deps.db).revokeLinks(row.id, deps.clock.now().toISOString());
      deps.logger.info({ emailId: row.id, teamId, revoked }, 'share links revoked');
      return { object: 'email', id: row.id, revoked };
    },

    /** The email a share token opens, or undefined for unknown, expired and revoked alike. */
    async open(token: string): Promise<SharedEmail | undefined> {
      if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return undefined;
      const link = await emailsShareRepo(deps.db).linkByHash(hashToken(token));
      if (!link || link.revoked_at || link.expires_at <= deps.clock.now().toISOString()) return undefined;
      const row = await emailsRepo(deps.db).byIdAnyTeam(link.email_id);
      if (!row) return undefined;
      return { email: row, attachments: await emailsShareRepo(deps.db).attachmentList(row.id), expiresAt: link.expires_at };
    },

    async listAttachments(teamId: string, id: string): Promise<{ object: 'list'; has_more: false; data: SentAttachmentView[] }> {
      const row = await email(teamId, id);
      const parts = await emailsShareRepo(deps.db).attachmentList(row.id);
      const base = deps.linkBase();
      return { object: 'list', has_more: false, data: parts.map((a) => attachmentView(a, base)) };
    },

    async getAttachment(teamId: string, id: string, attachmentId: string): Promise<SentAttachmentView> {
      const row = await email(teamId, id);
      const part = (await emailsShareRepo(deps.db).attachmentList(row.id)).find((a) => a.id === attachmentId.toLowerCase());
      if (!part) throw notFound('Attachment');
      return attachmentView(part, deps.linkBase());
    },

    /** What a signed download link serves, or undefined (404) when forged or expired. */
    async download(token: string) {
      const target = openSentDownload(deps.secretBox, token, deps.clock.now());
      return target ? emailsShareRepo(deps.db).attachment(target.emailId, target.attachmentId) : undefined;
    },
  };
}

export type EmailShares = ReturnType<typeof emailShares>;
