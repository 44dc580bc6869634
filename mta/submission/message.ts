import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { simpleParser, type AddressObject, type Attachment, type HeaderLines, type ParsedMail } from 'mailparser';
import type { AttachmentInput, SendEmailInput } from '../../core/emails/index.js';
import { smtpReply } from './replies.js';

// A submitted message becomes the request `POST /emails` takes, so it meets every rule of the API
// send path. What SMTP decides differently:
// - the envelope recipients (RCPT TO) are the recipients. A To or Cc address that is one of them
//   stays in that header; the others are sent as Bcc (never written to a header); a header address
//   that is no envelope recipient is left out, since svc cannot name it without sending to it;
// - a Bcc header is dropped (its addresses get the message only if they were envelope recipients);
// - the body is kept exactly as decoded: no text made from HTML, cid: references kept for the
//   inline parts, which travel as attachments with their content id;
// - headers svc writes itself (Date, Message-ID, MIME and DKIM ones) and trace headers are not
//   carried; the rest go as custom headers under the API's rules (at most 100, no duplicates);
// - the client's Message-ID with the envelope recipients is the idempotency key: a client that
//   retries after a lost reply (its 250 never arrived) gets the first answer, not a second send.

const asDecoded = { keepCidLinks: true, skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true } as const;

// Written by svc's composer, set through the fields above, or trace fields of the client's side.
const notCarried = new Set([
  'from', 'to', 'cc', 'bcc', 'subject', 'date', 'message-id', 'reply-to', 'return-path', 'mime-version',
  'dkim-signature', 'domainkey-signature', 'feedback-id', 'received', 'delivered-to', 'x-original-to',
  'authentication-results', 'arc-seal', 'arc-message-signature', 'arc-authentication-results',
]);
const notCarriedPrefixes = ['content-', 'x-svc-'];

export interface SubmittedMessage {
  input: SendEmailInput;
  /** The idempotency key (client's Message-ID and the envelope recipients), when a Message-ID was given. */
  idempotencyKey: string | undefined;
}

/** The send request a submitted message stands for, or an SMTP refusal saying what is missing. */
export async function submittedMessage(raw: Buffer, envelopeRecipients: readonly string[]): Promise<SubmittedMessage> {
  let mail: ParsedMail;
  try {
    mail = await simpleParser(Readable.from([raw]), asDecoded);
  } catch (err) {
    throw smtpReply(550, `5.6.0 The message could not be read as MIME: ${(err as Error).message}`);
  }
  const from = mailboxes(mail.from);
  if (from.length === 0) throw smtpReply(550, '5.6.0 The message has no From address');
  const recipients = splitRecipients(mail, envelopeRecipients);
  const html = typeof mail.html === 'string' ? mail.html : null;
  const text = typeof mail.text === 'string' && !(mail.text === '' && html !== null) ? mail.text : null;
  const replyTo = mailboxes(mail.replyTo).map(formatted);
  const input: SendEmailInput = {
    from: from.map(formatted).join(', '),
    ...recipients,
    reply_to: replyTo.length ? replyTo : null,
    subject: mail.subject ?? '',
    html,
    text,
    headers: customHeaders(mail.headerLines),
    attachments: mail.attachments.length ? mail.attachments.map(attachmentInput) : null,
  };
  return { input, idempotencyKey: idempotencyKeyOf(mail.messageId, envelopeRecipients) };
}

/** smtp:<sha256 of the Message-ID and the sorted recipients>: within the API's 1-256 characters. */
export function idempotencyKeyOf(messageId: string | undefined, envelopeRecipients: readonly string[]): string | undefined {
  if (!messageId) return undefined;
  const recipients = [...new Set(envelopeRecipients.map((r) => r.toLowerCase()))].sort();
  return `smtp:${createHash('sha256').update(messageId).update('\0').update(recipients.join('\0')).digest('hex')}`;
}

function splitRecipients(mail: ParsedMail, envelopeRecipients: readonly string[]): Pick<SendEmailInput, 'to' | 'cc' | 'bcc'> {
  const envelope = new Map(envelopeRecipients.map((r) => [r.toLowerCase(), r]));
  const named = new Set<string>();
  const inHeader = (field: AddressObject | AddressObject[] | undefined) => mailboxes(field).filter((m) => {
    const key = m.address.toLowerCase();
    if (!envelope.has(key) || named.has(key)) return false;
    named.add(key);
    return true;
  }).map(formatted);
  const to = inHeader(mail.to);
  const cc = inHeader(mail.cc);
  const bcc = [...envelope].filter(([key]) => !named.has(key)).map(([, address]) => address);
  if (to.length === 0) {
    throw smtpReply(550, '5.6.0 The To header names none of the envelope recipients; '
      + 'svc sends to the RCPT TO addresses and needs at least one of them in To');
  }
  return { to, cc: cc.length ? cc : null, bcc: bcc.length ? bcc : null };
}

interface Mailbox {
  address: string;
  name: string;
}

function mailboxes(field: AddressObject | AddressObject[] | undefined): Mailbox[] {
  const objects = field === undefined ? [] : Array.isArray(field) ? field : [field];
  const out: Mailbox[] = [];
  const visit = (entries: AddressObject['value']) => {
    for (const entry of entries) {
      if (entry.group) visit(entry.group);
      else if (entry.address) out.push({ address: entry.address, name: entry.name ?? '' });
    }
  };
  for (const object of objects) visit(object.value);
  return out;
}

/** `Display Name <address>`, the name quoted when it needs to be for the API's address parser. */
function formatted(mailbox: Mailbox): string {
  const name = mailbox.name.replace(/[\x00-\x1f\x7f]/g, ' ').trim();
  if (!name) return mailbox.address;
  return /^[\w !#$%&'*+/=?^`{|}~-]+$/.test(name) ? `${name} <${mailbox.address}>` : `"${name.replace(/["\\]/g, '\\$&')}" <${mailbox.address}>`;
}

/** The client's own header fields svc sends on, unfolded, as written (encoded words stay encoded). */
function customHeaders(lines: HeaderLines): Record<string, string> | null {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const { key, line } of lines) {
    if (notCarried.has(key) || notCarriedPrefixes.some((p) => key.startsWith(p))) continue;
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim();
    if (seen.has(key)) throw smtpReply(550, `5.6.0 The ${name} header is given twice; svc sends each custom header once`);
    seen.add(key);
    headers[name] = line.slice(colon + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
  }
  return seen.size ? headers : null;
}

function attachmentInput(part: Attachment): AttachmentInput {
  const inline = part.contentDisposition === 'inline' || part.related;
  return {
    content: part.content.toString('base64'),
    filename: part.filename ?? null,
    content_type: part.contentType || null,
    content_id: inline && part.cid ? part.cid : null,
  };
}
