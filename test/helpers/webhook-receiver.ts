import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_WAIT_MS, withDeadline } from './deadline.js';

/** What one request to the receiver is answered with. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer only after this many real milliseconds (for timeouts). */
  delayMs?: number;
  /** Answer only once this settles (for "one endpoint is stuck" tests). */
  until?: Promise<unknown>;
}

export interface ReceivedRequest {
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>`; give each endpoint its own path. */
  url: string;
  requests: ReceivedRequest[];
  /** Requests to one path. */
  at(path: string): ReceivedRequest[];
  /** Replies for the next requests to `path`, in order; afterwards `fallback(path)` answers. */
  script(path: string, replies: Reply[]): void;
  /** The reply once a path's script is used up (default 200 "ok"). */
  setFallback(path: string, reply: Reply): void;
  /** Most requests to one path that were open at the same time. */
  maxConcurrent(path: string): number;
  /** Resolves when `count` requests reached `path` (or any path when omitted); fails after `timeoutMs`. */
  waitFor(count: number, path?: string, timeoutMs?: number): Promise<ReceivedRequest[]>;
  stop(): Promise<void>;
}

/** A real HTTP server on loopback that records every request and answers from a script. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const scripts = new Map<string, Reply[]>();
  const fallbacks = new Map<string, Reply>();
  const open = new Map<string, number>();
  const peaks = new Map<string, number>();
  const waiters: { count: number; path?: string; resolve: (r: ReceivedRequest[]) => void }[] = [];
  const matching = (path?: string) => (path === undefined ? requests : requests.filter((r) => r.path === path));
  const notify = () => {
    for (const w of [...waiters]) {
      const found = matching(w.path);
      if (found.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(found);
      }
    }
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      open.set(path, (open.get(path) ?? 0) + 1);
      peaks.set(path, Math.max(peaks.get(path) ?? 0, open.get(path)!));
      const body = await readBody(req);
      requests.push({ path, method: req.method ?? '', headers: flatHeaders(req), body });
      const reply = scripts.get(path)?.shift() ?? fallbacks.get(path) ?? { status: 200, body: 'ok' };
      notify();
      if (reply.until) await reply.until;
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      open.set(path, open.get(path)! - 1);
      if (res.destroyed) return;
      res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
      res.end(reply.body ?? '');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    at: (path) => matching(path),
    script(path, replies) {
      scripts.set(path, [...(scripts.get(path) ?? []), ...replies]);
    },
    setFallback(path, reply) {
      fallbacks.set(path, reply);
    },
    maxConcurrent: (path) => peaks.get(path) ?? 0,
    async waitFor(count, path, timeoutMs = DEFAULT_WAIT_MS) {
      const waiter = { count, path, resolve: (_: ReceivedRequest[]) => undefined as void };
      const arrived = new Promise<ReceivedRequest[]>((resolve) => { waiter.resolve = resolve; });
      waiters.push(waiter);
      notify();
      return withDeadline(`${count} webhook requests to ${path ?? 'any path'}`, arrived, timeoutMs).catch((err: Error) => {
        waiters.splice(waiters.indexOf(waiter), 1);
        throw new Error(`${err.message} (${matching(path).length} arrived)`, { cause: err });
      });
    },
    async stop() {
      server.closeAllConnections();
      await withDeadline('the webhook receiver to close', new Promise<void>((resolve) => server.close(() => resolve())));
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
