// Row types of the sending tables (migration 005).

/** scheduled: waits for scheduled_at; dispatched: handed to the queue (locked); canceled. */
export type EmailStatus = 'scheduled' | 'dispatched' | 'canceled';

export interface EmailRow {
  id: string;
  team_id: string;
  api_key_id: string | null;
  domain_id: string;
  region: string;
  /** The From header as given: `address` or `Name <address>`. */
  from_header: string;
  /** The bare sender address, lower case. */
  from_email: string;
  to_json: string;
  cc_json: string | null;
  bcc_json: string | null;
  reply_to_json: string | null;
  subject: string;
  html: string | null;
  text: string | null;
  /** JSON object of custom headers. */
  headers_json: string | null;
  /** JSON array of {name, value}. */
  tags_json: string | null;
  topic_id: string | null;
  template_id: string | null;
  template_version: string | null;
  /** The broadcast this email is one recipient's copy of (migration 021); absent or null otherwise. */
  broadcast_id?: string | null;
  /** The automation and run whose send_email step made this email (migration 030); absent or null otherwise. */
  automation_id?: string | null;
  automation_run_id?: string | null;
  /** JSON array of the automation ids whose runs led to this email, the sender last (migration 030). */
  automation_chain?: string | null;
  /** Message-ID header value, with angle brackets. */
  message_id: string;
  scheduled_at: string | null;
  status: EmailStatus;
  /** The latest lifecycle name (or `queued`), what the API shows as `last_event`. */
  last_event: string;
  /** Every recipient address, lower case, space separated: what `search` reads. */
  recipients_text: string;
  recipient_count: number;
  /** Digest of subject + bodies: "the same message" for the bulk rule. */
  content_hash: string;
  has_unsubscribe: number;
  attachment_count: number;
  created_at: string;
  updated_at: string;
}

/**
 * One recipient's delivery. The outbound queue is the rows in state `queued` whose
 * next_attempt_at has come. `submitting` is written before the message data (and so before the
 * DATA terminator) goes out; `ambiguous` is a submission that saw no final reply. `held`: the
 * operator took a queued recipient out of the queue (svc admin queue hold) until released.
 */
export type RecipientState =
  | 'scheduled' | 'queued' | 'held' | 'submitting' | 'ambiguous'
  | 'delivered' | 'bounced' | 'suppressed' | 'failed' | 'canceled';

export interface EmailRecipientRow {
  /** `<email id>.<idx>`: derivable from a VERP return path without a lookup. */
  id: string;
  email_id: string;
  team_id: string;
  region: string;
  idx: number;
  address: string;
  domain: string;
  kind: 'to' | 'cc' | 'bcc';
  state: RecipientState;
  attempts: number;
  next_attempt_at: string | null;
  first_attempt_at: string | null;
  submitted_at: string | null;
  /** Deferrals stop being retried at this time. */
  expires_at: string | null;
  last_response: string | null;
  bounce_type: string | null;
  bounce_sub_type: string | null;
  updated_at: string;
  /** The outbound process (node id) holding the recipient, while it holds it (migration 025). */
  lease_owner?: string | null;
  /** Until when its claim holds unless renewed; another process may claim it after. */
  lease_until?: string | null;
  /** Engagement (migration 029): opens and clicks recorded by tracking, machine ones among them. */
  opens?: number;
  machine_opens?: number;
  clicks?: number;
  machine_clicks?: number;
  first_opened_at?: string | null;
  /** The first open (click) no machine made. */
  first_human_opened_at?: string | null;
  first_clicked_at?: string | null;
  first_human_clicked_at?: string | null;
  /** When a complaint about the message came in for this recipient. */
  complained_at?: string | null;
}

/** One delivery attempt of a recipient (migration 017): what `svc admin queue show` lists. */
export interface EmailAttemptRow {
  id: string;
  email_id: string;
  recipient_id: string;
  /** The recipient's attempt number (1 for the first); svc's own hiccups repeat the number. */
  attempt: number;
  at: string;
  /** delivered | deferred | bounced | ambiguous | failed. */
  outcome: string;
  /** The remote reply, or svc's reason when no server answered. */
  reply: string;
  /** `host[address]:port` of the server that answered, when one did. */
  relay: string | null;
}

export interface EmailTagRow {
  email_id: string;
  team_id: string;
  name: string;
  value: string;
}

export interface EmailAttachmentRow {
  id: string;
  email_id: string;
  team_id: string;
  idx: number;
  filename: string | null;
  content_type: string;
  content_id: string | null;
  disposition: 'attachment' | 'inline';
  size: number;
  content: Buffer;
}

export interface EmailShareLinkRow {
  id: string;
  email_id: string;
  team_id: string;
  token_hash: string;
  expires_at: string;
  revoked_at: string | null;
  created_at: string;
}

export interface IdempotencyKeyRow {
  team_id: string;
  key: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: string;
  expires_at: string;
}

export interface BulkWarningRow {
  team_id: string;
  content_hash: string;
  day: string;
  warned_at: string;
}
