import MailComposer from 'nodemailer/lib/mail-composer';
import type { EmailAttachmentRow, EmailRow } from '../../storage/repos/index.js';
import { listUnsubscribeUrls, rewriteHtml, trackingTokens, type TrackingPlan } from '../../core/tracking/index.js';

// The MIME message of an email, built by nodemailer's composer (never by hand). One message per
// email, identical for every recipient: the envelope (VERP return path, RCPT) differs, not the
// content — so it is composed and signed once. Bcc recipients never appear in the headers.
// With open or click tracking on for the domain, the HTML part differs per recipient (its tokens
// name the recipient): the message is then composed and signed for each (core/tracking/rewrite.ts).

/** One recipient's tracking: the plan and the 32-byte key its tokens are MACed with. */
export interface TrackingInput {
  plan: Omit<TrackingPlan, 'keep'>;
  key: Uint8Array;
}

const headerList = (json: string | null) => (json ? (JSON.parse(json) as { header: string }[]).map((m) => m.header) : undefined);

export async function composeMessage(email: EmailRow, attachments: readonly EmailAttachmentRow[], tracking?: TrackingInput): Promise<Buffer> {
  const custom: Record<string, string> = email.headers_json ? JSON.parse(email.headers_json) as Record<string, string> : {};
  const headers: Record<string, string> = {
    ...custom,
    'X-Svc-Email-Id': email.id,
    'Feedback-ID': `${email.domain_id}:${email.team_id}:transactional:svc`,
  };
  const replyToHeader = Object.keys(custom).find((h) => h.toLowerCase() === 'reply-to');
  if (replyToHeader) delete headers[replyToHeader];
  const composer = new MailComposer({
    from: email.from_header,
    to: headerList(email.to_json),
    cc: headerList(email.cc_json),
    replyTo: headerList(email.reply_to_json) ?? (replyToHeader ? custom[replyToHeader] : undefined),
    subject: email.subject,
    messageId: email.message_id,
    date: new Date(email.created_at),
    text: email.text ?? undefined,
    html: email.html === null ? undefined : tracking ? trackedHtml(email, tracking) : email.html,
    headers,
    attachments: attachments.map((a) => ({
      content: a.content,
      filename: a.filename ?? undefined,
      contentType: a.content_type,
      cid: a.content_id ?? undefined,
      contentDisposition: a.disposition,
    })),
    disableFileAccess: true,
    disableUrlAccess: true,
    xMailer: false,
  });
  return composer.compile().build();
}

/** The HTML part with this recipient's tracking; the List-Unsubscribe header's links stay as they are. */
function trackedHtml(email: EmailRow, tracking: TrackingInput): string {
  const plan = { ...tracking.plan, keep: listUnsubscribeUrls(email.headers_json) };
  return rewriteHtml(email.html!, plan, trackingTokens(tracking.key));
}
