import { extname } from 'node:path';
import type { AttachmentInput, AttachmentPart, BufferJson } from './types.js';
import { invalidAttachment, ruledFilename } from './validate.js';

/** Fetches a `path` attachment (an https URL) through an SSRF-safe client; throws to refuse. */
export type AttachmentFetcher = (url: string, maxBytes: number) => Promise<{ content: Buffer; contentType?: string; filename?: string }>;

const base64Shape = /^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$/;

const byExtension: Record<string, string> = {
  '.pdf': 'application/pdf', '.txt': 'text/plain', '.csv': 'text/csv', '.html': 'text/html', '.htm': 'text/html',
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp',
  '.svg': 'image/svg+xml', '.ics': 'text/calendar', '.zip': 'application/zip', '.json': 'application/json',
  '.doc': 'application/msword', '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xls': 'application/vnd.ms-excel', '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

const contentTypeOf = (filename: string | null) => (filename && byExtension[extname(filename).toLowerCase()]) || 'application/octet-stream';

/** Every part as bytes: `content` decoded (base64 or a Buffer's JSON), `path` fetched. */
export async function loadAttachments(parts: AttachmentInput[], fetcher: AttachmentFetcher | undefined, maxTotalBytes: number): Promise<AttachmentPart[]> {
  const out: AttachmentPart[] = [];
  let total = 0;
  for (const [i, part] of parts.entries()) {
    let content: Buffer;
    let filename = part.filename ?? null;
    let fetchedType: string | undefined;
    if (part.content !== undefined && part.content !== null && part.content !== '') {
      content = decodeContent(i, part.content);
    } else {
      if (!fetcher) throw invalidAttachment(i, 'Attachments by `path` are not enabled on this server.');
      const fetched = await fetchPart(i, fetcher, part.path!, maxTotalBytes - total);
      content = fetched.content;
      filename ??= fetched.filename ?? null;
      fetchedType = fetched.contentType;
    }
    total += content.length;
    if (total > maxTotalBytes) throw invalidAttachment(i, `Attachments may total at most ${Math.floor(maxTotalBytes / 1048576)} MB.`);
    out.push({
      filename,
      contentType: part.content_type ?? fetchedType ?? contentTypeOf(filename),
      contentId: part.content_id ?? null,
      disposition: part.content_id ? 'inline' : 'attachment',
      content,
    });
  }
  return out;
}

function decodeContent(index: number, content: string | BufferJson): Buffer {
  if (typeof content === 'string') {
    if (!base64Shape.test(content)) throw invalidAttachment(index, '`content` must be base64 text.');
    return Buffer.from(content, 'base64');
  }
  if (content && content.type === 'Buffer' && Array.isArray(content.data) && content.data.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    return Buffer.from(content.data);
  }
  throw invalidAttachment(index, '`content` must be base64 text or a Buffer.');
}

async function fetchPart(index: number, fetcher: AttachmentFetcher, path: string, maxBytes: number) {
  let url: URL;
  try {
    url = new URL(path);
  } catch {
    throw invalidAttachment(index, '`path` must be an http(s) URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalidAttachment(index, '`path` must be an http(s) URL.');
  let fetched: Awaited<ReturnType<AttachmentFetcher>>;
  try {
    fetched = await fetcher(url.toString(), maxBytes);
  } catch (err) {
    throw invalidAttachment(index, `The attachment at \`path\` could not be fetched: ${(err as Error).message}`);
  }
  // The caller never wrote this name (the server's Content-Disposition, else the URL's last
  // segment): it is put in the filename rule's form rather than refused.
  const derived = fetched.filename ?? lastSegment(url);
  return { ...fetched, filename: derived ? ruledFilename(derived) || undefined : undefined };
}

function lastSegment(url: URL): string | undefined {
  const raw = url.pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(raw) || undefined;
  } catch {
    return raw || undefined;
  }
}
