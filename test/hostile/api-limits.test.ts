import t from 'tap';
import { request } from 'node:http';
import { startTestAppliance } from '../helpers/appliance.js';
import { withDeadline } from '../helpers/deadline.js';
import { call } from '../helpers/http.js';

// Oversize bodies and pathological search strings: bounded time and memory, literal matching.
// Bounds are generous (20–30 s): they catch a hang or super-linear blow-up, not a slow machine.
const app = await startTestAppliance({ env: { SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
t.teardown(() => app.stop());
const team = await app.newTeam('Limits');
const token = team.token;
const url = new URL(app.baseUrl);

// Search strings that would be wildcards or backtracking traps if read as patterns.
const hostile = [
  '%_'.repeat(100), '%'.repeat(200), '_'.repeat(200), '\\'.repeat(200), 'a%'.repeat(100), `${'a'.repeat(30)}%`.repeat(6),
  `${'a'.repeat(199)}!`, '(a+)+$', '.*'.repeat(100), '[%]'.repeat(66), "' OR 1=1 --", '%\\%\\_', '*', '?', '%', '_',
];

// Data for the searches to run over: many suppressions and keys, two with literal % and _.
for (let batch = 0; batch < 10; batch++) {
  const emails = Array.from({ length: 100 }, (_, i) => `${'a'.repeat(50)}${batch * 100 + i}@inbox-one.net`);
  const r = await call(app.baseUrl, 'POST', '/suppressions/batch/add', { token, body: { emails } });
  if (r.status !== 200 && r.status !== 201) throw new Error(JSON.stringify(r.body));
}
await call(app.baseUrl, 'POST', '/suppressions', { token, body: { email: 'pct%_x@inbox-one.net' } });
await call(app.baseUrl, 'POST', '/suppressions', { token, body: { email: 'under_score@inbox-one.net' } });
await call(app.baseUrl, 'POST', '/api-keys', { token, body: { name: 'key %_ literal' } });
for (let i = 0; i < 30; i++) await call(app.baseUrl, 'POST', '/api-keys', { token, body: { name: `${'a'.repeat(40)} ${i}` } });

const doc = (await call(app.baseUrl, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };
const searchRoutes = Object.entries(doc.paths)
  .filter(([, ops]) => ops.get?.parameters?.some((p) => p.in === 'query' && p.name === 'search'))
  .map(([path]) => path);

interface BigPost {
  status: number;
  body: any;
  /** Bytes written before the answer came (or the connection ended). */
  written: number;
}

/**
 * POSTs `total` bytes of JSON in 1 MiB chunks (declared length, or chunked when `declare` is
 * false), honouring back-pressure, and stops writing as soon as an answer arrives.
 */
function postBig(path: string, total: number, declare: boolean): Promise<BigPost> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'user-agent': 'svc-tests/1.0' };
    if (declare) headers['content-length'] = total;
    let written = 0;
    let answered = false;
    const req = request({ host: url.hostname, port: url.port, path, method: 'POST', headers }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, written });
        req.destroy();
      });
    });
    req.on('error', (err) => (answered ? undefined : reject(err)));
    const chunk = Buffer.alloc(1 << 20, 'a');
    const head = Buffer.from('{"subject":"');
    const pump = () => {
      while (!answered && written < total) {
        const piece = written === 0 ? Buffer.concat([head, chunk.subarray(head.length)]) : chunk.subarray(0, Math.min(chunk.length, total - written));
        written += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

t.test('a 60 MB body against the 50 MB limit: 400 validation_error, bounded time and memory', async (t) => {
  for (const declare of [true, false]) {
    const label = declare ? 'declared length' : 'chunked';
    const rssBefore = process.memoryUsage().rss;
    const r = await withDeadline(`the answer to a 60 MB POST (${label})`, postBig('/emails', 60 * 1048576, declare), 30_000);
    const grown = (process.memoryUsage().rss - rssBefore) / 1048576;
    t.equal(r.status, 400, label);
    t.equal(r.body?.name, 'validation_error', label);
    t.match(r.body?.message, /too large/, label);
    t.comment(`${label}: answered after ${(r.written / 1048576).toFixed(0)} MiB written; rss grew ${grown.toFixed(0)} MiB`);
    // The appliance runs in this process: its buffer is at most the limit, never the whole body.
    t.ok(grown < 200, `${label}: memory bounded (${grown.toFixed(0)} MiB)`);
  }
  const after = await call(app.baseUrl, 'GET', '/api-keys', { token });
  t.equal(after.status, 200, 'the server keeps answering');
});

const escapedForJson = (text: string) => JSON.stringify(text.toLowerCase()).slice(1, -1);

t.test('every search parameter answers hostile strings within bounds, and matches them literally', async (t) => {
  t.ok(searchRoutes.length >= 5, `search routes: ${searchRoutes.join(', ')}`);
  let slowest = 0;
  for (const path of searchRoutes) {
    for (const text of hostile) {
      const started = performance.now();
      const r = await withDeadline(`${path} search ${JSON.stringify(text.slice(0, 20))}`, call(app.baseUrl, 'GET', `${path}?limit=100&search=${encodeURIComponent(text)}`, { token }), 20_000);
      slowest = Math.max(slowest, performance.now() - started);
      const label = `${path} search=${JSON.stringify(text.slice(0, 24))}${text.length > 24 ? '…' : ''}`;
      t.equal(r.status, 200, label);
      const misses = (r.body?.data ?? []).filter((item: unknown) => {
        const json = JSON.stringify(item).toLowerCase();
        return !json.includes(escapedForJson(text)) && !json.includes(encodeURIComponent(text).toLowerCase());
      });
      t.same(misses, [], `${label}: every item contains the text literally`);
    }
    const long = await withDeadline(`${path} search of 400 characters`, call(app.baseUrl, 'GET', `${path}?search=${encodeURIComponent('%_'.repeat(200))}`, { token }), 20_000);
    t.equal(long.status, 422, `${path}: 400 characters is over the limit`);
    t.equal(long.body.name, 'invalid_parameter');
  }
  t.comment(`slowest search answer: ${Math.round(slowest)} ms`);
});

t.test('% and _ are literal: they find only what contains them', async (t) => {
  const addresses = async (search: string) => (await call(app.baseUrl, 'GET', `/suppressions?limit=100&search=${encodeURIComponent(search)}`, { token })).body.data.map((s: { email: string }) => s.email);
  t.same(await addresses('%_'), ['pct%_x@inbox-one.net']);
  t.same(await addresses('%'), ['pct%_x@inbox-one.net']);
  t.same((await addresses('_')).sort(), ['pct%_x@inbox-one.net', 'under_score@inbox-one.net']);
  t.same(await addresses('a%'), []);
  const keys = (await call(app.baseUrl, 'GET', `/api-keys?limit=100&search=${encodeURIComponent('%_')}`, { token })).body.data.map((k: { name: string }) => k.name);
  t.same(keys, ['key %_ literal']);
});
