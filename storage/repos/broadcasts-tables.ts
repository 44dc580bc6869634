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

/** A rare fact about a broadcast's recipient (migration 029), listed by GET /broadcasts/{id}/recipients?type=<kind>. */
export type RecipientMarkKind = 'complained' | 'unsubscribed';

export interface BroadcastRecipientMarkRow {
  broadcast_id: string;
  kind: RecipientMarkKind;
  contact_id: string;
  team_id: string;
  /** When it first happened. */
  created_at: string;
}

/** Clicks on one link of a broadcast's emails (migration 029). */
export interface BroadcastLinkRow {
  broadcast_id: string;
  /** A hash of the URL: the key, since URLs run to 2 KiB. */
  link_key: string;
  /** Time-ordered: the list's cursor. */
  id: string;
  team_id: string;
  url: string;
  clicks: number;
  machine_clicks: number;
  /** Recipients who clicked it; and those of them with a click no machine made. */
  unique_clicks: number;
  unique_human_clicks: number;
}

/** One recipient email's clicks on one link of a broadcast. */
export interface BroadcastLinkClickRow {
  broadcast_id: string;
  email_id: string;
  link_key: string;
  clicks: number;
  machine_clicks: number;
}
