import { createHash } from 'node:crypto';

// A body that names a credential is dropped whole; send content is kept only as size and digest.
// Field names, not values, decide the first; a value that looks like one of our secrets counts too.
const credentialField = /(^|_)(password|passwd|passphrase|token|secret|key|private_key|api_key|signing_secret|credential|credentials)$/i;
const credentialValue = /^(svc_|svco_|svcor_|whsec_)|-----BEGIN [A-Z ]*PRIVATE KEY-----/;
const contentField = new Set(['html', 'text', 'content', 'react', 'raw']);
const MAX_STORED_BYTES = 64 * 1024;

/**
 * What is kept of a request or response body in the request log, as JSON text, or null.
 * `serialized` is the body's JSON as it was sent, when known: reused when nothing is replaced.
 */
export function redactBody(path: string, body: unknown, serialized?: string): string | null {
  if (body === undefined || body === null || isInboxPath(path)) return null;
  if (namesCredential(body)) return null;
  const kept = hasContent(body) ? JSON.stringify(replaceContent(body)) : (serialized ?? JSON.stringify(body));
  if (kept === undefined) return null;
  if (kept.length * 3 > MAX_STORED_BYTES && Buffer.byteLength(kept) > MAX_STORED_BYTES) return JSON.stringify({ omitted: 'too_large', ...measure(kept) });
  return kept;
}

export const isInboxPath = (path: string) => path === '/inbox' || path.startsWith('/inbox/');

function namesCredential(value: unknown, depth = 0): boolean {
  if (depth > 32) return true;
  if (typeof value === 'string') return credentialValue.test(value);
  if (Array.isArray(value)) return value.some((v) => namesCredential(v, depth + 1));
  if (value && typeof value === 'object') {
    return Object.entries(value).some(([k, v]) => credentialField.test(k) || namesCredential(v, depth + 1));
  }
  return false;
}

function hasContent(value: unknown, depth = 0): boolean {
  if (depth > 32) return true;
  if (Array.isArray(value)) return value.some((v) => hasContent(v, depth + 1));
  if (value && typeof value === 'object') {
    return Object.entries(value).some(([k, v]) => (contentField.has(k) && v !== null && v !== undefined) || hasContent(v, depth + 1));
  }
  return false;
}

function replaceContent(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(replaceContent);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = contentField.has(k) && v !== null && v !== undefined ? measure(typeof v === 'string' ? v : JSON.stringify(v)) : replaceContent(v);
    }
    return out;
  }
  return value;
}

function measure(text: string): { size: number; sha256: string } {
  return { size: Buffer.byteLength(text), sha256: createHash('sha256').update(text).digest('hex') };
}

/** `sdk:<name>` for a known SDK's User-Agent (e.g. resend-node:6.1.0 → sdk:node), else `api`. */
export function sourceFromUserAgent(userAgent: string | undefined): string {
  const match = userAgent ? /^(?:resend|svc)-([a-z0-9.+-]+)[:/]/i.exec(userAgent) : null;
  return match ? `sdk:${match[1]!.toLowerCase()}` : 'api';
}
