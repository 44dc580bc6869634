import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { withDeadline } from './deadline.js';

// Cloudflare cannot be reached from here, so autoconfiguration is tested against this: a local
// HTTP server speaking the documented subset of the v4 API svc uses — the {success, errors,
// messages, result, result_info} envelope, Bearer API tokens scoped to zones,
// GET /user/tokens/verify, GET /zones, GET and POST /zones/{zone_id}/dns_records — including
// Cloudflare's refusals (401 code 1000 for an unknown token, 403 code 9109 for a zone the token
// does not reach, 81053 for a CNAME beside other records, 81058 for an identical record).

export interface FakeRecord {
  id: string;
  zone_id: string;
  type: string;
  name: string;
  content: string;
  priority?: number;
  proxied: boolean;
  ttl: number;
  comment?: string;
}

export interface FakeCloudflare {
  /** Base URL to give svc (cloudflare_api_url), ending in /client/v4. */
  url: string;
  records: FakeRecord[];
  requests: { method: string; path: string; token?: string }[];
  addZone(name: string): string;
  addToken(token: string, zoneNames: string[], status?: 'active' | 'disabled' | 'expired'): void;
  addRecord(zoneName: string, record: { type: string; name: string; content: string; priority?: number }): void;
  recordsAt(name: string): FakeRecord[];
  stop(): Promise<void>;
}

interface Token {
  id: string;
  status: string;
  zoneIds: string[];
}

const cfId = () => randomBytes(16).toString('hex');

export async function startFakeCloudflare(): Promise<FakeCloudflare> {
  const zones = new Map<string, { id: string; name: string }>();
  const tokens = new Map<string, Token>();
  const records: FakeRecord[] = [];
  const requests: FakeCloudflare['requests'] = [];
  const zoneByName = (name: string) => [...zones.values()].find((z) => z.name === name);

  const server = createServer((req, res) => {
    void handle(req, res).catch((err) => send(res, 500, fail(500, String(err))));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    requests.push({ method: req.method ?? '', path: url.pathname + url.search, token: auth });
    const path = url.pathname.replace(/^\/client\/v4/, '');
    const token = auth ? tokens.get(auth) : undefined;
    if (!token) return send(res, 401, fail(1000, 'Invalid API Token'));
    if (req.method === 'GET' && path === '/user/tokens/verify') {
      return send(res, 200, ok({ id: token.id, status: token.status }));
    }
    if (token.status !== 'active') return send(res, 401, fail(1000, 'Invalid API Token'));
    if (req.method === 'GET' && path === '/zones') {
      const visible = token.zoneIds.map((id) => zones.get(id)!).filter((z) => !url.searchParams.get('name') || z.name === url.searchParams.get('name'));
      const perPage = Number(url.searchParams.get('per_page') ?? 20);
      const page = visible.slice(0, perPage).map((z) => ({ id: z.id, name: z.name, status: 'active' }));
      return send(res, 200, ok(page, { page: 1, per_page: perPage, count: page.length, total_count: visible.length, total_pages: Math.ceil(visible.length / perPage) }));
    }
    const match = /^\/zones\/([^/]+)\/dns_records$/.exec(path);
    if (!match) return send(res, 404, fail(7003, 'Could not route to ' + path));
    const zoneId = decodeURIComponent(match[1]!);
    if (!token.zoneIds.includes(zoneId)) return send(res, 403, fail(9109, 'Unauthorized to access requested resource'));
    if (req.method === 'GET') {
      const name = url.searchParams.get('name');
      const type = url.searchParams.get('type');
      const found = records.filter((r) => r.zone_id === zoneId && (!name || r.name === name.toLowerCase()) && (!type || r.type === type));
      return send(res, 200, ok(found, { page: 1, per_page: 100, count: found.length, total_count: found.length }));
    }
    if (req.method === 'POST') return create(zoneId, await bodyOf(req), res);
    return send(res, 405, fail(10000, 'Method not allowed'));
  }

  function create(zoneId: string, body: Record<string, unknown>, res: ServerResponse): void {
    const zone = zones.get(zoneId)!;
    const type = String(body.type ?? '');
    const rawName = String(body.name ?? '').toLowerCase();
    const name = rawName === '@' ? zone.name : rawName.endsWith(zone.name) ? rawName : `${rawName}.${zone.name}`;
    const content = String(body.content ?? '');
    if (!['TXT', 'CNAME', 'MX', 'A', 'AAAA'].includes(type) || !content) return send(res, 400, fail(9005, 'Content for record is invalid'));
    if (type === 'MX' && typeof body.priority !== 'number') return send(res, 400, fail(9100, 'MX records require a priority'));
    const here = records.filter((r) => r.zone_id === zoneId && r.name === name);
    if (here.some((r) => r.type === type && r.content === content)) return send(res, 400, fail(81058, 'An identical record already exists.'));
    if ((type === 'CNAME' && here.length > 0) || here.some((r) => r.type === 'CNAME')) {
      return send(res, 400, fail(81053, 'An A, AAAA, or CNAME record with that host already exists.'));
    }
    const record: FakeRecord = {
      id: cfId(), zone_id: zoneId, type, name, content, proxied: body.proxied === true, ttl: Number(body.ttl ?? 1),
      ...(typeof body.priority === 'number' ? { priority: body.priority } : {}), ...(typeof body.comment === 'string' ? { comment: body.comment } : {}),
    };
    records.push(record);
    send(res, 200, ok(record));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/client/v4`,
    records,
    requests,
    addZone(name) {
      const id = cfId();
      zones.set(id, { id, name });
      return id;
    },
    addToken(token, zoneNames, status = 'active') {
      tokens.set(token, { id: cfId(), status, zoneIds: zoneNames.map((n) => zoneByName(n)!.id) });
    },
    addRecord(zoneName, record) {
      records.push({ id: cfId(), zone_id: zoneByName(zoneName)!.id, proxied: false, ttl: 1, ...record, name: record.name.toLowerCase() });
    },
    recordsAt: (name) => records.filter((r) => r.name === name.toLowerCase()),
    stop: () => withDeadline('the fake Cloudflare API to close', new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); })),
  };
}

const ok = (result: unknown, result_info?: Record<string, number>) => ({ success: true, errors: [], messages: [], result, ...(result_info ? { result_info } : {}) });
const fail = (code: number, message: string) => ({ success: false, errors: [{ code, message }], messages: [], result: null });

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}
