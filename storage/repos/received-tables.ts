// Row types of received mail (migration 006). Kept beside the repo; tables.ts lists them.

export type DroppedReason = 'storage_quota' | 'daily_cap' | 'virus' | 'parse_failed' | 'no_mailbox' | 'team_blocked';

/** clean: clamd passed it; infected: clamd named a signature; unscanned: scanning off or failed open. */
export type ScanStatus = 'clean' | 'infected' | 'unscanned';

export interface ReceivedEmailRow {
  id: string;
  team_id: string;
  domain_id: string | null;
  /** When svc accepted it (the end of DATA). */
  created_at: string;
  message_id: string | null;
  subject: string;
  /** The From header as written ("Name <addr>"), and its parts for search. */
  from_text: string;
  from_address: string;
  from_name: string;
  /** JSON string arrays of the header addresses. */
  to_json: string;
  cc_json: string | null;
  bcc_json: string | null;
  reply_to_json: string | null;
  /** JSON array: the team's addresses the message was accepted for (the envelope's RCPT TO). */
  received_for_json: string;
  /** Lower-cased subject, sender and recipients, one per line: what `search` matches inside. */
  search_text: string;
  /** JSON object of header name → value (or values when repeated). */
  headers_json: string | null;
  html: string | null;
  text: string | null;
  dropped_reason: DroppedReason | null;
  /** Spool name of the raw source, or null when it is not kept. */
  raw_key: string | null;
  raw_size: number;
  envelope_from: string;
  client_ip: string;
  client_helo: string;
  scan_status: ScanStatus;
  scan_signature: string | null;
  /** JSON: SPF, DKIM, DMARC and ARC verdicts and the Authentication-Results value. */
  auth_json: string | null;
}

export interface ReceivedAttachmentRow {
  id: string;
  email_id: string;
  team_id: string;
  /** Order among the message's parts as the MIME parser lists them: how a download finds the bytes. */
  position: number;
  filename: string | null;
  content_type: string;
  content_id: string | null;
  content_disposition: 'inline' | 'attachment';
  size: number;
  /** md5 of the decoded bytes, checked when a download re-reads the part. */
  checksum: string;
}

/** Kept bytes and messages per team: the mailbox quota reads this, not a SUM over every message. */
export interface ReceivedUsageRow {
  team_id: string;
  kept_bytes: number;
  kept_count: number;
}

/** A delivery status notification or complaint report that came back, and what it did. */
export interface ReceivedReportRow {
  id: string;
  kind: 'dsn' | 'arf';
  created_at: string;
  team_id: string | null;
  email_id: string | null;
  recipient: string | null;
  outcome: 'bounced' | 'delayed' | 'complained' | 'delivered' | 'unmatched' | 'unparsed';
  /** JSON: the parsed fields that mattered (status, action, diagnostic, feedback type). */
  detail_json: string;
}
