// The send request as the HTTP layer hands it over (field names as on the wire), and the
// normalised form the rest of core works with.
import type { Mailbox } from './addresses.js';

export interface BufferJson {
  type: 'Buffer';
  data: number[];
}

export interface AttachmentInput {
  /** Base64 text, or a Node Buffer as JSON.stringify writes it. */
  content?: string | BufferJson | null;
  filename?: string | null;
  path?: string | null;
  content_type?: string | null;
  content_id?: string | null;
}

export interface TagInput {
  name: string;
  value: string;
}

export interface TemplateInput {
  id: string;
  variables?: Record<string, unknown>;
}

export interface SendEmailInput {
  from?: string;
  to?: string | string[];
  cc?: string | string[] | null;
  bcc?: string | string[] | null;
  reply_to?: string | string[] | null;
  subject?: string;
  html?: string | null;
  text?: string | null;
  headers?: Record<string, string> | null;
  tags?: TagInput[] | Record<string, string> | null;
  attachments?: AttachmentInput[] | null;
  scheduled_at?: string | null;
  template?: TemplateInput | null;
  topic_id?: string | null;
}

export interface RecipientInput extends Mailbox {
  kind: 'to' | 'cc' | 'bcc';
}

export interface AttachmentPart {
  filename: string | null;
  contentType: string;
  contentId: string | null;
  disposition: 'attachment' | 'inline';
  content: Buffer;
}

/** A request that passed every check that needs no state. */
export interface NormalisedSend {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  /** Every distinct recipient address, in to, cc, bcc order. */
  recipients: RecipientInput[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  tags: TagInput[] | null;
  /** Parts with `content`; parts given by `path` are fetched before they get here. */
  attachments: AttachmentInput[];
  scheduledAt: string | null;
  topicId: string | null;
  /** The template and version the body was rendered from, if any. */
  template?: { id: string; versionId: string } | null;
}
