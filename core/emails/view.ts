import type { EmailListRow } from '../../storage/repos/index.js';
import type { EmailRow } from '../../storage/repos/index.js';

export interface EmailListItem {
  object: 'email';
  id: string;
  from: string;
  to: string[];
  cc: string[] | null;
  bcc: string[] | null;
  reply_to: string[] | null;
  subject: string;
  created_at: string;
  scheduled_at: string | null;
  message_id: string;
  last_event: string;
  topic_id?: string;
}

export interface EmailView extends EmailListItem {
  html: string | null;
  text: string | null;
  tags?: { name: string; value: string }[];
}

const headers = (json: string | null) => (json ? (JSON.parse(json) as { header: string }[]).map((m) => m.header) : null);

export function listItem(row: EmailListRow): EmailListItem {
  const item: EmailListItem = {
    object: 'email', id: row.id, from: row.from_header, to: headers(row.to_json) ?? [], cc: headers(row.cc_json),
    bcc: headers(row.bcc_json), reply_to: headers(row.reply_to_json), subject: row.subject, created_at: row.created_at,
    scheduled_at: row.scheduled_at, message_id: row.message_id, last_event: row.last_event,
  };
  if (row.topic_id) item.topic_id = row.topic_id;
  return item;
}

export function emailView(row: EmailRow): EmailView {
  const { topic_id: _topic, ...base } = listItem(row);
  const view: EmailView = { ...base, html: row.html, text: row.text };
  if (row.tags_json) view.tags = JSON.parse(row.tags_json) as { name: string; value: string }[];
  if (row.topic_id) view.topic_id = row.topic_id;
  return view;
}

/** `status` values GET /emails filters on: the lifecycle names, and `queued`. */
export const emailStatuses = [
  'queued', 'scheduled', 'sent', 'delivered', 'delivery_delayed', 'bounced', 'complained', 'opened', 'clicked',
  'failed', 'suppressed', 'canceled',
] as const;
