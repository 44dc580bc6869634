// Webhook delivery throughput: events delivered per second to a local receiver with five
// endpoints, one of them slow, beside the same receiver's raw capacity measured in the same run.
//
// Inside this process: a real appliance (api + jobs roles, temp data folder, SQLite with the
// shipped synchronous=FULL, private redis-server) whose jobs role runs the dispatcher loop, and a
// bare node:http receiver on loopback. Four endpoints answer at once; the fifth holds every answer
// BENCH_SLOW_MS. BENCH_EVENTS events are written to the outbox in one go; the clock runs from that
// commit until every fast endpoint has acknowledged every event. Then, with the same receiver,
// the same body size and the same number of requests in flight (4 per fast endpoint), plain
// undici POSTs measure what the receiver and this process can do without svc — before and after
// the svc run, since the machines are noisy and only the ratio means anything.
//
// Settings (environment): BENCH_EVENTS (2000), BENCH_SLOW_MS (200), BENCH_CONCURRENCY (4),
// BENCH_SYNC (FULL; NORMAL shows what the fsync per commit costs).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { startTestAppliance } from '../test/helpers/appliance.js';
import { call } from '../test/helpers/http.js';
import { eventsRepo } from '../storage/repos/index.js';
import { inTransaction } from '../storage/sql/index.js';
import { emitEvent } from '../core/outbox/index.js';
import { intFromEnv } from './settings.js';

const EVENTS = intFromEnv('BENCH_EVENTS', 2000);
const SLOW_MS = intFromEnv('BENCH_SLOW_MS', 200);
const CONCURRENCY = intFromEnv('BENCH_CONCURRENCY', 4);
const FAST_PATHS = ['/fast-1', '/fast-2', '/fast-3', '/fast-4'];
const SLOW_PATH = '/slow';

interface Receiver {
  url: string;
  counts: Map<string, number>;
  /** Resolves when every fast path has `count` requests. */
  fastReached(count: number): Promise<void>;
  stop(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const counts = new Map<string, number>();
  let waiter: { count: number; resolve: () => void } | undefined;
  const check = () => {
    if (waiter && FAST_PATHS.every((p) => (counts.get(p) ?? 0) >= waiter!.count)) {
      waiter.resolve();
      waiter = undefined;
    }
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      counts.set(path, (counts.get(path) ?? 0) + 1);
      check();
      const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (path === SLOW_PATH) setTimeout(answer, SLOW_MS);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    fastReached: (count) => new Promise((resolve) => { waiter = { count, resolve }; check(); }),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sampleEvent(i: number): Record<string, unknown> {
  return {
    email_id: `0193${String(i).padStart(8, '0')}-0000-7000-8000-000000000000`, from: 'Acme <news@acme.example>', to: ['reader@example.org'],
    subject: 'Your weekly digest', message_id: `<${i}@svc.example>`, created_at: new Date().toISOString(), tags: { campaign: 'weekly' },
  };
}

/** Plain POSTs of a body like svc's, `inFlight` at a time, spread over the fast paths. */
async function rawCapacity(url: string, total: number, inFlight: number, body: string): Promise<number> {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < total; i = next++) {
      const res = await request(`${url}${FAST_PATHS[i % FAST_PATHS.length]}`, {
        method: 'POST', dispatcher: agent, body,
        headers: { 'content-type': 'application/json', 'user-agent': 'Svc-Webhooks/1.0', 'wh-id': 'x', 'wh-timestamp': '0', 'wh-signature': 'v1,x' },
      });
      await res.body.text();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return total / seconds;
}

async function svcRun(receiver: Receiver) {
  const app = await startTestAppliance({
    roles: ['api', 'jobs'],
    env: {
      SVC_WEBHOOKS_ALLOW_PRIVATE: 'true', SVC_WEBHOOKS_POLL_MS: '50', SVC_WEBHOOKS_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
      SVC_SQLITE_SYNCHRONOUS: process.env.BENCH_SYNC ?? 'FULL', SVC_LOG_LEVEL: 'silent',
    },
  });
  try {
    const team = await app.newTeam('Bench');
    for (const path of [...FAST_PATHS, SLOW_PATH]) {
      const r = await call(app.baseUrl, 'POST', '/webhooks', { token: team.token, body: { endpoint: receiver.url + path, events: ['email.delivered'] } });
      if (r.status !== 201) throw new Error(`creating ${path} failed: ${JSON.stringify(r.body)}`);
    }
    const db = app.appliance.services.database.db;
    const reached = receiver.fastReached(EVENTS);
    const started = performance.now();
    await inTransaction(db, async (trx) => {
      const events = eventsRepo(trx);
      for (let i = 0; i < EVENTS; i++) await emitEvent(events, team.teamId, 'email.delivered', sampleEvent(i), new Date());
    });
    const written = performance.now();
    await reached;
    const seconds = (performance.now() - started) / 1000;
    const slowDone = receiver.counts.get(SLOW_PATH) ?? 0;
    return { seconds, writeMs: written - started, slowDone };
  } finally {
    await app.stop();
  }
}

async function main(): Promise<void> {
  const receiver = await startReceiver();
  try {
    const body = JSON.stringify({ type: 'email.delivered', created_at: new Date().toISOString(), data: sampleEvent(0) });
    const inFlight = CONCURRENCY * FAST_PATHS.length;
    const rawTotal = EVENTS * FAST_PATHS.length;
    const rawBefore = await rawCapacity(receiver.url, rawTotal, inFlight, body);
    receiver.counts.clear();
    const svc = await svcRun(receiver);
    const rawAfter = await rawCapacity(receiver.url, rawTotal, inFlight, body);
    const rawMedian = (rawBefore + rawAfter) / 2;
    const fastDeliveries = (EVENTS * FAST_PATHS.length) / svc.seconds;
    console.log(`events: ${EVENTS}, endpoints: ${FAST_PATHS.length} fast + 1 answering after ${SLOW_MS} ms, ${CONCURRENCY} requests in flight per endpoint`);
    console.log(`svc: every event delivered to the 4 fast endpoints in ${svc.seconds.toFixed(2)} s (outbox write ${svc.writeMs.toFixed(0)} ms)`);
    console.log(`svc: ${(EVENTS / svc.seconds).toFixed(0)} events/s fully delivered, ${fastDeliveries.toFixed(0)} deliveries/s to fast endpoints`);
    console.log(`svc: the slow endpoint got ${svc.slowDone} meanwhile (${(svc.slowDone / svc.seconds).toFixed(1)}/s; its ceiling is ${(CONCURRENCY * 1000 / SLOW_MS).toFixed(0)}/s)`);
    console.log(`raw: the same receiver takes ${rawBefore.toFixed(0)} req/s before, ${rawAfter.toFixed(0)} req/s after (${inFlight} in flight, plain undici POSTs)`);
    console.log(`svc/raw delivery ratio: ${(fastDeliveries / rawMedian).toFixed(2)}`);
  } finally {
    await receiver.stop();
  }
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
