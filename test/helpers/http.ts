export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Raw body text, sent as is. */
  raw?: string;
  headers?: Record<string, string>;
  /** Leave out the User-Agent header. */
  noUserAgent?: boolean;
}

/** How long one call may take before it fails (generous: a bound on hangs, not a speed check). */
export const CALL_TIMEOUT_MS = 60_000;

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
}

/** One HTTP call the way SDK clients make it: JSON content type and a User-Agent on every request. */
export async function call(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (!options.noUserAgent) headers['user-agent'] ??= 'svc-tests/1.0';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  // fetch always sends a User-Agent; go through node:http when it must be absent.
  if (options.noUserAgent) return rawCall(baseUrl, method, path, headers, body);
  const what = `${method} ${path}`;
  const res = await fetch(baseUrl + path, { method, headers, body, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) }).catch(timedOut(what));
  const text = await res.text().catch(timedOut(what));
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

async function rawCall(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<CallResult> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(baseUrl + path, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.setTimeout(CALL_TIMEOUT_MS, () => req.destroy(new Error(`${method} ${path}: no answer within ${CALL_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Names the call when its time ran out; passes any other error on as it is. */
const timedOut = (what: string) => (err: unknown): never => {
  if (err instanceof DOMException && err.name === 'TimeoutError') throw new Error(`${what}: no answer within ${CALL_TIMEOUT_MS} ms`, { cause: err });
  throw err;
};

/** An email's `last_event` as the API shows it. */
export async function lastEventOf(baseUrl: string, token: string, emailId: string): Promise<string> {
  return (await call(baseUrl, 'GET', `/emails/${emailId}`, { token })).body.last_event as string;
}
