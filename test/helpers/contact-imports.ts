import { call, CALL_TIMEOUT_MS, type CallResult } from './http.js';
import { waitFor } from './deadline.js';

// Contact imports over raw HTTP (no SDK has an imports call): a multipart upload built by fetch's
// own FormData, and the wait for an import to finish.

export interface ImportOptions {
  column_map?: unknown;
  on_conflict?: string;
  segments?: unknown;
  topics?: unknown;
  /** Extra raw text fields, sent as they are. */
  raw?: Record<string, string>;
  /** Leave the file out. */
  noFile?: boolean;
}

const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

export async function uploadImport(baseUrl: string, token: string, csv: string | Buffer, options: ImportOptions = {}): Promise<CallResult> {
  const form = new FormData();
  for (const name of ['column_map', 'on_conflict', 'segments', 'topics'] as const) {
    if (options[name] !== undefined) form.append(name, text(options[name]));
  }
  for (const [name, value] of Object.entries(options.raw ?? {})) form.append(name, value);
  if (!options.noFile) form.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
  const res = await fetch(`${baseUrl}/contacts/imports`, {
    method: 'POST', body: form, headers: { authorization: `Bearer ${token}`, 'user-agent': 'svc-tests/1.0' }, signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const body = await res.text();
  return { status: res.status, headers: res.headers, body: body ? JSON.parse(body) : undefined };
}

/** The import once it is completed or failed. */
export async function finishedImport(baseUrl: string, token: string, id: string, timeoutMs = 60_000): Promise<any> {
  return waitFor(`import ${id} to finish`, async () => {
    const r = await call(baseUrl, 'GET', `/contacts/imports/${id}`, { token });
    return r.body?.status === 'completed' || r.body?.status === 'failed' ? r.body : undefined;
  }, timeoutMs, 50);
}

/** Uploads, expects 201, waits for the end. */
export async function runImport(baseUrl: string, token: string, csv: string | Buffer, options: ImportOptions = {}): Promise<any> {
  const r = await uploadImport(baseUrl, token, csv, options);
  if (r.status !== 201) throw new Error(`import refused: ${r.status} ${JSON.stringify(r.body)}`);
  return finishedImport(baseUrl, token, r.body.id);
}
