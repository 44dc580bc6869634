import type { DroppedReason, ReceivedAttachmentRow, ReceivedEmailRow, ReceivedSummary } from '../../storage/repos/index.js';

// Wire shapes of received mail (docs/api-conventions.md, "Received mail").

export interface ReceivedAttachmentMeta {
  id: string;
  filename: string | null;
  size: number;
  content_type: string;
  content_id: string | null;
  content_disposition: 'inline' | 'attachment';
}

export interface ReceivedAttachmentView extends ReceivedAttachmentMeta {
  object: 'attachment';
  download_url: string;
  expires_at: string;
}

export interface ReceivedListItem {
  id: string;
  to: string[];
  from: string;
  created_at: string;
  subject: string;
  cc: string[] | null;
  bcc: string[] | null;
  reply_to: string[] | null;
  received_for: string[];
  message_id: string | null;
  attachments: ReceivedAttachmentMeta[];
  dropped_reason?: DroppedReason;
}

export interface ReceivedEmailView extends ReceivedListItem {
  object: 'email';
  html: string | null;
  text: string | null;
  headers: Record<string, string | string[]> | null;
  raw: { download_url: string; expires_at: string } | null;
  /** SPF, DKIM, DMARC and ARC as svc found them on arrival (mailauth), with its Authentication-Results. */
  authentication: Record<string, unknown> | null;
}

export const attachmentMeta = (row: ReceivedAttachmentRow): ReceivedAttachmentMeta => ({
  id: row.id,
  filename: row.filename,
  size: row.size,
  content_type: row.content_type,
  content_id: row.content_id,
  content_disposition: row.content_disposition,
});

const jsonOrNull = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export function listItem(row: ReceivedSummary, attachments: readonly ReceivedAttachmentRow[]): ReceivedListItem {
  const item: ReceivedListItem = {
    id: row.id,
    to: JSON.parse(row.to_json) as string[],
    from: row.from_text,
    created_at: row.created_at,
    subject: row.subject,
    cc: jsonOrNull(row.cc_json),
    bcc: jsonOrNull(row.bcc_json),
    reply_to: jsonOrNull(row.reply_to_json),
    received_for: JSON.parse(row.received_for_json) as string[],
    message_id: row.message_id,
    attachments: attachments.map(attachmentMeta),
  };
  if (row.dropped_reason) item.dropped_reason = row.dropped_reason;
  return item;
}

export function emailView(
  row: ReceivedEmailRow, attachments: readonly ReceivedAttachmentRow[], raw: ReceivedEmailView['raw'], html: string | null,
): ReceivedEmailView {
  const { dropped_reason, ...rest } = listItem(row, attachments);
  const view: ReceivedEmailView = {
    object: 'email',
    ...rest,
    html,
    text: row.text,
    headers: jsonOrNull(row.headers_json),
    raw,
    authentication: jsonOrNull(row.auth_json),
  };
  if (dropped_reason) view.dropped_reason = dropped_reason;
  return view;
}
