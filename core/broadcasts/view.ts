import type { BroadcastRow, BroadcastStatus } from '../../storage/repos/index.js';

// The wire shapes of a broadcast (the resend SDK's Broadcast; `audience_id` is the older name
// of `segment_id` and carries the same value).

export interface BroadcastView {
  object: 'broadcast';
  id: string;
  name: string;
  segment_id: string | null;
  audience_id: string | null;
  topic_id: string | null;
  template_id: string | null;
  from: string | null;
  subject: string | null;
  reply_to: string[] | null;
  preview_text: string | null;
  html: string | null;
  text: string | null;
  status: BroadcastStatus;
  created_at: string;
  scheduled_at: string | null;
  sent_at: string | null;
}

export interface BroadcastListItem {
  id: string;
  name: string;
  segment_id: string | null;
  audience_id: string | null;
  status: BroadcastStatus;
  created_at: string;
  scheduled_at: string | null;
  sent_at: string | null;
}

export function broadcastView(row: BroadcastRow): BroadcastView {
  return {
    object: 'broadcast', id: row.id, name: row.name, segment_id: row.segment_id, audience_id: row.segment_id,
    topic_id: row.topic_id, template_id: row.template_id, from: row.from_header, subject: row.subject,
    reply_to: row.reply_to_json === null ? null : (JSON.parse(row.reply_to_json) as string[]),
    preview_text: row.preview_text, html: row.html, text: row.text, status: row.status,
    created_at: row.created_at, scheduled_at: row.scheduled_at, sent_at: row.sent_at,
  };
}

export const broadcastListItem = (row: BroadcastRow): BroadcastListItem => ({
  id: row.id, name: row.name, segment_id: row.segment_id, audience_id: row.segment_id, status: row.status,
  created_at: row.created_at, scheduled_at: row.scheduled_at, sent_at: row.sent_at,
});
