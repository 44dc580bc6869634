import { missingField, ServiceError, validationError } from '../errors.js';
import { parseScheduledAt } from '../scheduling.js';
import { addressKey, parseMailboxes, type ParsedMailboxes } from './addresses.js';
import type { AttachmentInput, NormalisedSend, RecipientInput, SendEmailInput, TagInput } from './types.js';

export const maxRecipients = 50;
const maxSubjectBytes = 998;
// Caps the spec leaves open, generous but finite (docs/api-conventions.md, Hostile input).
export const maxTags = 50;
export const maxHeaders = 100;
const maxHeaderValueBytes = 4000;
export const maxAttachments = 100;
const maxFilenameChars = 255;

// Headers the caller may not set (spec: From, To, Cc, Bcc, Subject, Date, Message-ID,
// Return-Path), plus the ones svc writes itself so the message stays well formed and traceable.
const reservedHeaders = new Set([
  'from', 'to', 'cc', 'bcc', 'subject', 'date', 'message-id', 'return-path',
  'mime-version', 'content-type', 'content-transfer-encoding', 'dkim-signature', 'x-svc-email-id', 'feedback-id',
]);
const headerName = /^[\x21-\x39\x3b-\x7e]{1,76}$/;
const tagText = /^[A-Za-z0-9_-]{1,256}$/;

/**
 * Every check that needs no state: shapes, limits, header injection, scheduled_at. `parsed`: the
 * from and reply-to mailboxes already read for other messages of the same page (addresses.ts).
 */
export function normaliseSend(input: SendEmailInput, now: Date, parsed?: ParsedMailboxes): NormalisedSend {
  if (input.from === undefined || input.from === null) throw missingField('from');
  if (input.to === undefined || input.to === null || (Array.isArray(input.to) && input.to.length === 0)) throw missingField('to');
  if (input.subject === undefined || input.subject === null) throw missingField('subject');
  checkListSizes(input);
  const fromList = parseMailboxes('from', input.from, parsed);
  if (fromList.length !== 1) throw validationError(422, 'from', '`from` must be exactly one email address.');
  const to = parseMailboxes('to', input.to);
  const cc = parseMailboxes('cc', input.cc);
  const bcc = parseMailboxes('bcc', input.bcc);
  checkSubject(input.subject);
  if (isBlank(input.html) && isBlank(input.text)) {
    throw new ServiceError(422, 'missing_required_field', 'Missing `html` or `text` field: an email needs a body.', {
      errors: [{ path: 'html', message: 'html or text is required' }, { path: 'text', message: 'html or text is required' }],
    });
  }
  return {
    from: fromList[0]!,
    to, cc, bcc,
    replyTo: parseMailboxes('reply_to', input.reply_to, parsed),
    recipients: distinctRecipients([['to', to], ['cc', cc], ['bcc', bcc]]),
    subject: input.subject,
    html: isBlank(input.html) ? null : input.html!,
    text: isBlank(input.text) ? null : input.text!,
    headers: checkHeaders(input.headers, input.reply_to),
    tags: normaliseTags(input.tags),
    attachments: checkAttachmentShapes(input.attachments),
    scheduledAt: input.scheduled_at === undefined || input.scheduled_at === null ? null : parseScheduledAt(input.scheduled_at, now),
    topicId: input.topic_id ?? null,
  };
}

/**
 * Counts over their cap, refused before any item is read. One string is one address (a string
 * naming several is refused when parsed), so the recipient count is known here already.
 */
function checkListSizes(input: SendEmailInput): void {
  const count = (v: unknown) => (Array.isArray(v) ? v.length : v === undefined || v === null ? 0 : 1);
  if (count(input.to) + count(input.cc) + count(input.bcc) > maxRecipients) {
    throw validationError(422, 'to', `An email can have at most ${maxRecipients} recipients across \`to\`, \`cc\` and \`bcc\`.`);
  }
  if (count(input.reply_to) > maxRecipients) throw validationError(422, 'reply_to', `\`reply_to\` can hold at most ${maxRecipients} addresses.`);
  const tags = input.tags && typeof input.tags === 'object' ? (Array.isArray(input.tags) ? input.tags.length : Object.keys(input.tags).length) : 0;
  if (tags > maxTags) throw validationError(422, 'tags', `An email can have at most ${maxTags} tags (got ${tags}).`);
  const headers = input.headers && typeof input.headers === 'object' ? Object.keys(input.headers).length : 0;
  if (headers > maxHeaders) throw validationError(422, 'headers', `An email can have at most ${maxHeaders} custom headers (got ${headers}).`);
  if (count(input.attachments) > maxAttachments) {
    throw new ServiceError(422, 'invalid_attachment', `An email can have at most ${maxAttachments} attachments.`, { errors: [{ path: 'attachments', message: `at most ${maxAttachments}` }] });
  }
}

const isBlank = (value: string | null | undefined) => value === undefined || value === null || value === '';

function checkSubject(subject: string): void {
  if (/[\r\n\0]/.test(subject)) throw validationError(422, 'subject', '`subject` must be one line.');
  if (Buffer.byteLength(subject) > maxSubjectBytes) throw validationError(422, 'subject', `\`subject\` must be at most ${maxSubjectBytes} bytes of UTF-8.`);
}

function distinctRecipients(groups: [RecipientInput['kind'], ReturnType<typeof parseMailboxes>][]): RecipientInput[] {
  const seen = new Set<string>();
  const out: RecipientInput[] = [];
  for (const [kind, list] of groups) {
    for (const mailbox of list) {
      const key = addressKey(mailbox.address);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ ...mailbox, kind });
    }
  }
  return out;
}

function checkHeaders(headers: Record<string, string> | null | undefined, replyTo: unknown): Record<string, string> | null {
  if (!headers) return null;
  const entries = Object.entries(headers);
  if (entries.length === 0) return null;
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const path = `headers.${name}`;
    const lower = name.toLowerCase();
    if (!headerName.test(name)) throw validationError(422, path, `\`${name}\` is not a valid header name.`);
    if (reservedHeaders.has(lower)) throw validationError(422, path, `The \`${name}\` header is set by svc and cannot be overridden.`);
    if (lower === 'reply-to' && replyTo) throw validationError(422, path, 'Use either `reply_to` or a `Reply-To` header, not both.');
    if (seen.has(lower)) throw validationError(422, path, `The \`${name}\` header is given twice.`);
    seen.add(lower);
    if (typeof value !== 'string') throw validationError(422, path, `The \`${name}\` header value must be a string.`);
    if (/[\r\n\0]/.test(value)) throw validationError(422, path, `The \`${name}\` header value must not contain line breaks.`);
    if (Buffer.byteLength(value) > maxHeaderValueBytes) throw validationError(422, path, `The \`${name}\` header value is too long.`);
  }
  return Object.fromEntries(entries);
}

/** Tags arrive as an object (spec) or as [{name, value}] (clients); stored as the array. */
export function normaliseTags(tags: SendEmailInput['tags']): TagInput[] | null {
  if (!tags) return null;
  const list = Array.isArray(tags) ? tags : Object.entries(tags).map(([name, value]) => ({ name, value }));
  if (list.length === 0) return null;
  const names = new Set<string>();
  for (const [i, tag] of list.entries()) {
    const path = `tags[${i}]`;
    if (!tag || typeof tag.name !== 'string' || typeof tag.value !== 'string') throw validationError(422, path, 'A tag has a string `name` and `value`.');
    if (!tagText.test(tag.name)) throw validationError(422, `${path}.name`, 'Tag names may only contain ASCII letters, numbers, underscores or dashes, at most 256 characters.');
    if (!tagText.test(tag.value)) throw validationError(422, `${path}.value`, 'Tag values may only contain ASCII letters, numbers, underscores or dashes, at most 256 characters.');
    if (names.has(tag.name)) throw validationError(422, `${path}.name`, `The tag \`${tag.name}\` is given twice.`);
    names.add(tag.name);
  }
  return list.map((t) => ({ name: t.name, value: t.value }));
}

function checkAttachmentShapes(attachments: AttachmentInput[] | null | undefined): AttachmentInput[] {
  if (!attachments) return [];
  for (const [i, part] of attachments.entries()) {
    const hasContent = part.content !== undefined && part.content !== null && part.content !== '';
    const hasPath = part.path !== undefined && part.path !== null && part.path !== '';
    if (hasContent === hasPath) throw invalidAttachment(i, 'Each attachment needs exactly one of `content` or `path`.');
    if (part.filename !== undefined && part.filename !== null && (typeof part.filename !== 'string' || ruledFilename(part.filename) !== part.filename)) {
      throw invalidAttachment(i, `\`filename\` must be one line of at most ${maxFilenameChars} characters, without control characters.`);
    }
    for (const key of ['content_type', 'content_id'] as const) {
      const value = part[key];
      if (value !== undefined && value !== null && (typeof value !== 'string' || /[\r\n\0]/.test(value))) {
        throw invalidAttachment(i, `\`${key}\` must be one line of text.`);
      }
    }
    if (part.content_type && !/^[\w.+-]+\/[\w.+-]+$/.test(part.content_type)) throw invalidAttachment(i, '`content_type` must be a media type such as application/pdf.');
  }
  return attachments;
}

/**
 * The attachment filename rule: one line without control characters, at most 255 characters (a
 * filename reaches MIME parameters, the API and webhook consumers). Returns the name as the rule
 * leaves it. A name the caller gives must already be that; a name svc derives for a fetched part
 * (from its URL or its Content-Disposition) is used in that form.
 */
export function ruledFilename(name: string): string {
  const chars = Array.from(name.replace(/[\x00-\x1f\x7f]/g, ''));
  // The end of a long name is kept: it carries the extension.
  return (chars.length > maxFilenameChars ? chars.slice(-maxFilenameChars) : chars).join('');
}

export const invalidAttachment = (index: number, message: string) =>
  new ServiceError(422, 'invalid_attachment', message, { errors: [{ path: `attachments[${index}]`, message }] });

/** An unsubscribe link: a List-Unsubscribe header or a link whose text or target says so. */
export function hasUnsubscribe(send: Pick<NormalisedSend, 'headers' | 'html' | 'text'>): boolean {
  if (send.headers && Object.keys(send.headers).some((h) => h.toLowerCase() === 'list-unsubscribe')) return true;
  if (send.html && /<a\b[^>]*>[^<]*unsubscribe|<a\b[^>]*href=["'][^"']*unsubscribe/i.test(send.html)) return true;
  return !!send.text && /https?:\/\/\S*unsubscribe/i.test(send.text);
}
