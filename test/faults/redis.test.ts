import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { startFaultRedis } from '../helpers/faults-redis.js';
import { startLoad, summarise } from '../helpers/faults-load.js';
import { call } from '../helpers/http.js';
import { verifyDomainThroughApi } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';

// Redis stopped (kill -9), stalled (DEBUG SLEEP 5) and flushed (FLUSHALL) under a steady load of
// authenticated GETs and POST /emails: no request waits beyond a generous bound, /ready says
// degraded naming redis while it is away, keys answered before keep answering the same email,
// every accepted email reaches the MX exactly once, and work resumes by itself.
const HANG_MS = 10_000;
const redis = await startFaultRedis();
const dns = await mailZone(['inbox-one.net']);
const mx = await startFakeMx({ keepRaw: false });
const app = await startTestAppliance({
  redis, roles: ['api', 'outbound', 'jobs'],
  env: {
    SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_POLL_S: '2',
    SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000', SVC_DOMAINS_RECHECK_CRON: '0 0 1 1 *',
  },
});
t.teardown(async () => { await app.stop(); await redis.stop(); await mx.stop(); await dns.stop(); });
const team = await app.newTeam('Faults');
await verifyDomainThroughApi(app.baseUrl, team.token, dns, 'faults-sender.net');
const db = app.appliance.services.database.db;
const body = (n: number | string) => ({ from: 'Faults <f@faults-sender.net>', to: `r${n}@inbox-one.net`, subject: `Load ${n}`, text: `Message ${n}` });
const sendKeyed = (key: string, n: number | string) => call(app.baseUrl, 'POST', '/emails', { token: team.token, body: body(n), headers: { 'idempotency-key': key } });
const ready = async () => {
  const r = await fetch(`${app.baseUrl}/ready`, { signal: AbortSignal.timeout(HANG_MS) });
  return { status: r.status, body: (await r.json()) as { status: string; failed: string[] } };
};
const emailCount = async () => Number((await db.selectFrom('emails').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

// Keys answered before any fault: a replay must always get the same email.
const before = new Map<string, string>();
for (let i = 0; i < 5; i++) before.set(`before-${i}`, (await sendKeyed(`before-${i}`, `before-${i}`)).body.id);

interface Phase { fault: string; readyWhileDown?: { status: number; failed: string[] }; recoveryMs: number }
const phases: Phase[] = [];
const replays: { phase: string; key: string; status: number; id?: string }[] = [];
const replayAll = async (phase: string) => {
  for (const [key, id] of before) {
    const r = await sendKeyed(key, key);
    replays.push({ phase, key, status: r.status, id: r.body?.id });
    if (r.status === 200 && r.body.id !== id) throw new Error(`${phase}: ${key} answered another email`);
  }
};
const untilReady = async () => {
  const from = performance.now();
  await waitFor('/ready ok', async () => (await ready()).status === 200, 30_000);
  return Math.round(performance.now() - from);
};

const load = startLoad({ baseUrl: app.baseUrl, token: team.token, workers: 4, hangMs: HANG_MS + 5_000, sendBody: body, pauseMs: 20 });
await sleep(1500);

// 1. kill -9, then a new empty server on the same port.
await redis.kill();
const down = await waitFor('/ready degraded', async () => { const r = await ready(); return r.status === 503 ? r : undefined; }, 30_000);
await replayAll('redis down');
await sleep(2000);
await redis.restart();
phases.push({ fault: 'redis kill -9', readyWhileDown: { status: down.status, failed: down.body.failed }, recoveryMs: await untilReady() });
await sleep(1500);

// 2. A stall: the server answers nobody for 5 s.
await redis.stall(5);
await sleep(500);
const stalled = await ready();
await sleep(5000);
phases.push({ fault: 'redis DEBUG SLEEP 5', readyWhileDown: { status: stalled.status, failed: stalled.body.failed }, recoveryMs: await untilReady() });
await replayAll('after the stall');
await sleep(1000);

// 3. Everything Redis held is gone at once.
const flushed = await redis.command('FLUSHALL');
if (flushed !== '+OK') throw new Error(`FLUSHALL: ${flushed}`);
await sleep(1500);
await replayAll('after FLUSHALL');
phases.push({ fault: 'redis FLUSHALL', recoveryMs: await untilReady() });
await load.stop();

const acceptedIds = [...load.accepted.values()];
const rows = await db.selectFrom('emails').select(['id', 'message_id']).where('id', 'in', [...acceptedIds, ...before.values()]).execute();
const messageIds = new Map(rows.map((r) => [r.id, r.message_id]));
await waitFor('every accepted email at the MX', async () => {
  const atMx = mx.accepted();
  return [...messageIds.values()].every((m) => atMx.has(m));
}, 90_000).catch(() => undefined);

t.test('no request hung; the answers', async (t) => {
  t.comment(summarise(load.records));
  for (const r of load.records.filter((x) => x.ms > 2500)) t.comment(`slow: ${JSON.stringify(r)}`);
  const hung = load.records.filter((r) => r.hung || r.ms > HANG_MS);
  t.same(hung, [], `every request answered within ${HANG_MS} ms (slowest ${Math.max(...load.records.map((r) => r.ms))} ms)`);
  t.ok(load.records.filter((r) => r.kind === 'send').length > 20, 'the load ran');
  const unanswered = load.records.filter((r) => r.status === 0);
  t.same(unanswered.map((r) => r.error), [], 'every request got an HTTP answer');
  const refusedSends = load.records.filter((r) => r.kind === 'send' && r.status !== 200);
  t.ok(refusedSends.every((r) => r.status === 503 || r.status === 500), `a send svc did not take is a 5xx it can retry: ${[...new Set(refusedSends.map((r) => r.status))]}`);
});

t.test('/ready says degraded naming redis while it is away, and recovers by itself', async (t) => {
  for (const p of phases) t.comment(`${p.fault}: ready while hurt ${JSON.stringify(p.readyWhileDown ?? null)}, ok again after ${p.recoveryMs} ms`);
  for (const p of phases.filter((x) => x.readyWhileDown)) {
    t.equal(p.readyWhileDown!.status, 503, p.fault);
    t.ok(p.readyWhileDown!.failed.includes('redis'), `${p.fault}: redis is named`);
  }
});

t.test('idempotency holds for keys answered before the faults', async (t) => {
  t.ok(replays.length >= 15);
  for (const r of replays) {
    t.ok(r.status === 200 || r.status === 503, `${r.phase} ${r.key}: ${r.status}`);
    if (r.status === 200) t.equal(r.id, before.get(r.key), `${r.phase} ${r.key}: the same email`);
  }
  t.ok(replays.filter((r) => r.phase !== 'redis down').every((r) => r.status === 200), 'answered once Redis is back');
  // Replays of load keys answered during and after the faults.
  const sample = [...load.accepted].filter((_, i) => i % Math.max(1, Math.floor(load.accepted.size / 20)) === 0);
  const count = await emailCount();
  for (const [key, id] of sample) {
    const r = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: body(Number(key.slice('load-'.length))), headers: { 'idempotency-key': key } });
    t.equal(r.body.id, id, `${key}: the same email`);
  }
  t.equal(await emailCount(), count, 'no replay made an email');
});

t.test('nothing accepted is lost or sent twice; the queue drained by itself', async (t) => {
  const atMx = mx.accepted();
  const missing = [...messageIds.values()].filter((m) => !atMx.has(m));
  const twice = [...atMx].filter(([, n]) => n > 1).map(([m]) => m);
  t.comment(`accepted ${messageIds.size} (load ${acceptedIds.length} + 5 keyed), at the MX ${atMx.size}`);
  t.equal(messageIds.size, acceptedIds.length + before.size, 'every accepted id is a stored email');
  t.same(missing, [], 'every accepted email reached the MX');
  t.same(twice, [], 'none twice');
});
