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
  const options = composerOptions(email, attachments, tracking);
  const textEncoding = attachments.length === 0 ? plainTextEncoding(options.headerTexts, [options.mail.text, options.mail.html]) : undefined;
  return new MailComposer({ ...options.mail, textEncoding }).compile().build();
}

/** What the composer is given for an email, and every header text it will write (exported for its test). */
export function composerOptions(email: EmailRow, attachments: readonly EmailAttachmentRow[], tracking?: TrackingInput) {
  const custom: Record<string, string> = email.headers_json ? JSON.parse(email.headers_json) as Record<string, string> : {};
  const headers: Record<string, string> = {
    ...custom,
    'X-Svc-Email-Id': email.id,
    'Feedback-ID': `${email.domain_id}:${email.team_id}:transactional:svc`,
  };
  const replyToHeader = Object.keys(custom).find((h) => h.toLowerCase() === 'reply-to');
  if (replyToHeader) delete headers[replyToHeader];
  const to = headerList(email.to_json);
  const cc = headerList(email.cc_json);
  const replyTo = headerList(email.reply_to_json) ?? (replyToHeader ? custom[replyToHeader] : undefined);
  const mail = {
    from: email.from_header,
    to,
    cc,
    replyTo,
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
    xMailer: false as const,
  };
  const replyTos = replyTo === undefined ? [] : Array.isArray(replyTo) ? replyTo : [replyTo];
  const headerTexts = [email.from_header, email.subject, ...(to ?? []), ...(cc ?? []), ...replyTos, ...Object.entries(headers).flat()];
  return { mail, headerTexts };
}

/** A character that makes nodemailer weigh quoted-printable against base64 (mime-node `_getTextEncoding`). */
const weighed = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\uffff]/;
const latinLetter = /[A-Za-z]/;

/**
 * The encoding nodemailer would choose, when the choice is plain: no header needs an encoded word
 * and each body part is 7-bit text with a Latin letter, so its own count (Latin letters against
 * 8-bit and control characters, twice per part) can only answer quoted-printable. Told it up front,
 * the composer skips the count: a quarter of a 4 KB message's composing, in the signing thread
 * the send path waits on. The message is byte for byte the same (test/mta/compose.test.ts).
 * Anything else (8-bit text, attachments) is left to nodemailer.
 */
function plainTextEncoding(headerTexts: readonly string[], bodies: readonly (string | undefined)[]): 'quoted-printable' | undefined {
  if (headerTexts.some((value) => weighed.test(value))) return undefined;
  const present = bodies.filter((body): body is string => body !== undefined && body !== '');
  if (present.length === 0 || present.some((body) => weighed.test(body) || !latinLetter.test(body))) return undefined;
  return 'quoted-printable';
}

/** The HTML part with this recipient's tracking; the List-Unsubscribe header's links stay as they are. */
function trackedHtml(email: EmailRow, tracking: TrackingInput): string {
  const plan = { ...tracking.plan, keep: listUnsubscribeUrls(email.headers_json) };
  return rewriteHtml(email.html!, plan, trackingTokens(tracking.key));
}
