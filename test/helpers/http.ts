export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Raw body text, sent as is. */
  raw?: string;
  headers?: Record<string, string>;
  /** Leave out the User-Agent header. */
  noUserAgent?: boolean;
}

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
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
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
    req.on('error', reject);
    req.end(body);
  });
}
