import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { withDeadline } from './deadline.js';
import { freePort } from './ports.js';

// An HTTPS server on loopback standing in for `mta-sts.<domain>` policy hosts (RFC 8461 section
// 3.3) and TLS-RPT https: collectors: it serves /.well-known/mta-sts.txt by Host header from a map
// the test edits, counts the fetches, and keeps every POST body.

export interface PolicyServer {
  port: number;
  /** host (mta-sts.<domain>) → policy text; a number answers that HTTP status. */
  policies: Map<string, string | number>;
  fetches: { host: string; at: number }[];
  posts: { path: string; contentType: string; body: Buffer }[];
  stop(): Promise<void>;
}

export async function startPolicyServer(tls: { key: string; cert: string }): Promise<PolicyServer> {
  const port = await freePort();
  const policies = new Map<string, string | number>();
  const fetches: PolicyServer['fetches'] = [];
  const posts: PolicyServer['posts'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(tls, (req, res) => {
    const host = String(req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        posts.push({ path: req.url ?? '', contentType: String(req.headers['content-type'] ?? ''), body: Buffer.concat(chunks) });
        res.writeHead(201).end();
      });
      return;
    }
    if (req.url !== '/.well-known/mta-sts.txt') return void res.writeHead(404).end();
    fetches.push({ host, at: Date.now() });
    const policy = policies.get(host);
    if (policy === undefined) return void res.writeHead(404).end();
    if (typeof policy === 'number') return void res.writeHead(policy).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end(policy);
  });
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  return {
    port, policies, fetches, posts,
    stop: () => withDeadline('the policy server to close', new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    })),
  };
}
