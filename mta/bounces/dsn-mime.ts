import { simpleParser, type Attachment, type MailParserOptions } from 'mailparser';
import type { ReturnedMessage } from '../../core/receiving/index.js';

// The MIME side of reading reports (multipart/report, RFC 6522), all through mailparser: the
// machine-readable part (message/delivery-status, message/feedback-report) comes back as a part of
// its own, and the returned message as one more (ignoreEmbedded keeps message/rfc822 whole instead
// of folding it into the text).

export interface ReportParts {
  /** Content-Type parameters of the top part, e.g. report-type. */
  reportType: string | null;
  parts: Attachment[];
  text: string;
  subject: string;
}

// ignoreEmbedded is passed on to mailparser's MIME splitter; @types/mailparser does not list it.
const asParts = {
  keepDeliveryStatus: true, ignoreEmbedded: true, skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true, keepCidLinks: true,
} as MailParserOptions;

export async function reportParts(raw: Buffer): Promise<ReportParts> {
  const mail = await simpleParser(raw, asParts);
  const contentType = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  return {
    reportType: contentType?.params?.['report-type']?.toLowerCase() ?? null,
    parts: mail.attachments,
    text: typeof mail.text === 'string' ? mail.text : '',
    subject: mail.subject ?? '',
  };
}

export const partOfType = (parts: Attachment[], ...types: string[]): Attachment | undefined =>
  parts.find((p) => types.includes(p.contentType.toLowerCase()));

/**
 * The field blocks of a machine-readable report part (header-style fields, blocks separated by a
 * blank line), each read by mailparser's header parser: name (lower case) → unfolded value.
 */
export async function fieldBlocks(content: Buffer): Promise<Record<string, string>[]> {
  const blocks = content.toString('utf8').split(/\r?\n[ \t]*\r?\n/).map((b) => b.trim()).filter(Boolean);
  const out: Record<string, string>[] = [];
  for (const block of blocks) {
    const mail = await simpleParser(Buffer.from(`${block}\r\n\r\n`), asParts);
    const fields: Record<string, string> = {};
    for (const { key, line } of mail.headerLines) {
      if (!key || key in fields) continue;
      fields[key] = line.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
    }
    if (Object.keys(fields).length > 0) out.push(fields);
  }
  return out;
}

/** The returned message (message/rfc822, text/rfc822-headers and their RFC 6532 forms). */
export async function returnedMessage(parts: Attachment[]): Promise<ReturnedMessage | null> {
  const part = partOfType(parts, 'message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers');
  if (!part) return null;
  const mail = await simpleParser(part.content, asParts);
  const headers: Record<string, string> = {};
  for (const { key, line } of mail.headerLines) {
    if (key && !(key in headers)) headers[key] = line.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
  }
  return { messageId: mail.messageId ?? null, headers };
}

/** "rfc822; Ann@Example.net" → "ann@example.net"; the address type is dropped. */
export function addressField(value: string | undefined): string | null {
  if (!value) return null;
  const address = value.includes(';') ? value.slice(value.indexOf(';') + 1) : value;
  const bare = address.trim().replace(/^<|>$/g, '').trim().toLowerCase();
  return bare || null;
}
