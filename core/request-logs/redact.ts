import { createHash } from 'node:crypto';

// A body that names a credential is dropped whole; send content is kept only as size and digest.
// Field names, not values, decide the first; a value that looks like one of our secrets counts too.
const credentialField = /(^|_)(password|passwd|passphrase|token|secret|key|private_key|api_key|signing_secret|credential|credentials)$/i;
const credentialValue = /^(svc_|svco_|svcor_|whsec_)|-----BEGIN [A-Z ]*PRIVATE KEY-----/;
const contentField = new Set(['html', 'text', 'content', 'react', 'raw']);
const MAX_STORED_BYTES = 64 * 1024;

// A share URL or signed download URL is a bearer credential inside an otherwise useful value
// (`url`, `download_url`, or pasted into any field or key), so the value is kept with its token
// replaced in place by a measurement: `https://h/share/emails/<redacted sha256:HEX>`. The link's
// shape stays readable; the digest tells whether it was a token someone holds without revealing
// it. Paths match as the router does (any case) and percent-encoded; the token is every
// base64url, `.`, `~` or `%` character after the path, so a real token is always covered whole.
const linkPath = /((?:\/|%2F)(?:share(?:\/|%2F)emails|downloads(?:\/|%2F)(?:sent|received))(?:\/|%2F))([A-Za-z0-9_.~%-]+)/gi;
const linkPathTest = new RegExp(linkPath.source, 'i');
const shortestLink = '/share/emails/x'.length;
const holdsLink = (text: string) => text.length >= shortestLink && linkPathTest.test(text);
const redactLinks = (text: string) => text.replace(linkPath, (_, path: string, token: string) => `${path}<redacted sha256:${sha256(token)}>`);

/**
 * What is kept of a request or response body in the request log, as JSON text, or null.
 * `serialized` is the body's JSON as it was sent, when known: reused when nothing is replaced.
 */
export function redactBody(path: string, body: unknown, serialized?: string): string | null {
  if (body === undefined || body === null || isInboxPath(path)) return null;
  const found = inspect(body, 0);
  if (found & CREDENTIAL) return null;
  const kept = found & (CONTENT | LINK) ? JSON.stringify(replaced(body)) : (serialized ?? JSON.stringify(body));
  if (kept === undefined) return null;
  if (kept.length * 3 > MAX_STORED_BYTES && Buffer.byteLength(kept) > MAX_STORED_BYTES) return JSON.stringify({ omitted: 'too_large', ...measure(kept) });
  return kept;
}

export const isInboxPath = (path: string) => path === '/inbox' || path.startsWith('/inbox/');

const CREDENTIAL = 1;
const CONTENT = 2;
const LINK = 4;

/**
 * One walk over the body (every request and answer passes here): CREDENTIAL if a field name or
 * a value names a credential, CONTENT if it carries send content, LINK if a value holds a share
 * or download link. Too deep counts as all of them.
 */
function inspect(value: unknown, depth: number): number {
  if (depth > 32) return CREDENTIAL | CONTENT | LINK;
  if (typeof value === 'string') return credentialValue.test(value) ? CREDENTIAL : holdsLink(value) ? LINK : 0;
  if (value === null || typeof value !== 'object') return 0;
  let found = 0;
  if (Array.isArray(value)) {
    for (const item of value) {
      found |= inspect(item, depth + 1);
      if (found & CREDENTIAL) return found;
    }
    return found;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const v = record[key];
    if (credentialField.test(key)) return found | CREDENTIAL;
    if (holdsLink(key)) found |= LINK;
    if (contentField.has(key) && v !== null && v !== undefined) found |= CONTENT;
    found |= inspect(v, depth + 1);
    if (found & CREDENTIAL) return found;
  }
  return found;
}

function replaced(value: unknown): unknown {
  if (typeof value === 'string') return redactLinks(value);
  if (Array.isArray(value)) return value.map(replaced);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[redactLinks(k)] = contentField.has(k) && v !== null && v !== undefined ? measure(typeof v === 'string' ? v : JSON.stringify(v)) : replaced(v);
    }
    return out;
  }
  return value;
}

function measure(text: string): { size: number; sha256: string } {
  return { size: Buffer.byteLength(text), sha256: sha256(text) };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** `sdk:<name>` for a known SDK's User-Agent (e.g. resend-node:6.1.0 → sdk:node), else `api`. */
export function sourceFromUserAgent(userAgent: string | undefined): string {
  const match = userAgent ? /^(?:resend|svc)-([a-z0-9.+-]+)[:/]/i.exec(userAgent) : null;
  return match ? `sdk:${match[1]!.toLowerCase()}` : 'api';
}
