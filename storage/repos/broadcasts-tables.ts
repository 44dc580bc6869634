// Row types of the broadcasts tables (migration 021). Kept beside the repo; tables.ts lists them.

/** draft → queued | scheduled → sending → sent; canceled from queued or scheduled, or while sending. */
export type BroadcastStatus = 'draft' | 'scheduled' | 'queued' | 'sending' | 'sent' | 'canceled';

export interface BroadcastRow {
  id: string;
  team_id: string;
  name: string;
  segment_id: string | null;
  topic_id: string | null;
  /** A published template the broadcast sends (the templates seam; null: its own html/text). */
  template_id: string | null;
  from_header: string | null;
  subject: string | null;
  /** JSON array of addresses. */
  reply_to_json: string | null;
  preview_text: string | null;
  html: string | null;
  text: string | null;
  status: BroadcastStatus;
  scheduled_at: string | null;
  /** When the fan-out finished (every recipient's email created). */
  sent_at: string | null;
  recipients_sent: number;
  recipients_excluded: number;
  created_at: string;
  updated_at: string;
}

/** Why a segment member got no email. */
export type ExclusionReason = 'unsubscribed' | 'not_subscribed' | 'topic_opt_out' | 'suppressed' | 'sandbox';

export interface BroadcastRecipientRow {
  broadcast_id: string;
  contact_id: string;
  team_id: string;
  email: string;
  status: 'sent' | 'excluded';
  reason: ExclusionReason | null;
  email_id: string | null;
  created_at: string;
}
