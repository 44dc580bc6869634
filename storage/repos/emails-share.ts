import type { Db } from '../sql/db.js';
import type { EmailAttachmentRow, EmailShareLinkRow } from './emails-tables.js';

export type AttachmentMeta = Omit<EmailAttachmentRow, 'content'>;

/** Share links (only a hash of each secret is kept) and sent attachments. */
export function emailsShareRepo(db: Db) {
  return {
    async insertLink(row: EmailShareLinkRow): Promise<void> {
      await db.insertInto('email_share_links').values(row).execute();
    },
    linkByHash: (tokenHash: string) => db.selectFrom('email_share_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst(),
    async revokeLinks(emailId: string, at: string): Promise<number> {
      const r = await db.updateTable('email_share_links').set({ revoked_at: at }).where('email_id', '=', emailId).where('revoked_at', 'is', null).where('expires_at', '>', at).executeTakeFirst();
      return Number(r.numUpdatedRows);
    },
    attachmentList: (emailId: string): Promise<AttachmentMeta[]> =>
      db.selectFrom('email_attachments').select(['id', 'email_id', 'team_id', 'idx', 'filename', 'content_type', 'content_id', 'disposition', 'size'])
        .where('email_id', '=', emailId).orderBy('idx').execute(),
    attachment: (emailId: string, id: string) =>
      db.selectFrom('email_attachments').selectAll().where('email_id', '=', emailId).where('id', '=', id).executeTakeFirst(),
  };
}
