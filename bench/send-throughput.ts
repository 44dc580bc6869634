// Sending throughput: POST /emails/batch accepted → delivered at a local sink (Postfix's
// smtp-sink), 4 KB messages, DKIM on, every accepted message durable (SQLite, synchronous=FULL)
// before its 200 — printed beside Postfix relaying the same number of 4 KB messages
// (smtp-source → a private postfix instance → the same smtp-sink) in the same run. Also the
// p50/p99 latency of single POST /emails and svc's peak RSS. With --crash (or BENCH_CRASH=1) it
// then runs the kill -9 crash rig on 2,000 emails.
//
// svc runs as it would in production: the API in this process, the outbound MTA as a separate
// `bin/svc start --role outbound` process (the domain is created and verified through the API,
// so its real DKIM key signs). The machines are shared and noisy: compare the ratio, not the
// absolute figures.
//
// Needs Debian's postfix package (smtp-sink, smtp-source, postfix); installs it when missing.
// Tuning (environment): BENCH_MESSAGES (5000), BENCH_SESSIONS (20), BENCH_LATENCY_REQUESTS (500),
// BENCH_CLIENTS (4 concurrent batch posters), BENCH_API_NODE_OPTIONS / BENCH_OUTBOUND_NODE_OPTIONS (NODE_OPTIONS
// of the API / outbound process, e.g. --heapsnapshot-signal=SIGUSR2), BENCH_OUTBOUND_ENV (JSON of extra
// environment for the outbound process).
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestAppliance, type TestAppliance } from '../test/helpers/appliance.js';
import { startDnsServer } from '../test/helpers/dns-server.js';
import { call } from '../test/helpers/http.js';
import { freePort } from '../test/helpers/ports.js';
import { startTestRedis, type TestRedis } from '../test/helpers/redis.js';
import { verifyDomainThroughApi } from '../test/helpers/sending.js';
import { exited, runCrashRig, spawnOutboundProcess, spawnRoleProcess } from '../test/helpers/crash-rig.js';
import { rerunUnderServiceFlags } from './service-flags.js';
import { childCpuSeconds, ensurePostfix, runPostfix, startSink, waitUntil } from './postfix.js';

const MESSAGES = intFromEnv('BENCH_MESSAGES', 5000);
const SESSIONS = intFromEnv('BENCH_SESSIONS', 20);
const LATENCY_REQUESTS = intFromEnv('BENCH_LATENCY_REQUESTS', 500);
const CLIENTS = intFromEnv('BENCH_CLIENTS', 4);
const BODY = 'The quick brown fox jumps over the lazy dog. '.repeat(90).slice(0, 4000);

function intFromEnv(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
}

/** Waits for `target` deliveries; gives up (and says where the rest are) after 60 s without progress. */
async function untilDeliveredOrStalled(delivered: () => Promise<number>, target: number, db: import('../storage/sql/index.js').Db): Promise<void> {
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const n = await delivered();
    if (n >= target) return;
    if (n !== last) { last = n; lastChange = Date.now(); }
    if (Date.now() - lastChange > 60_000) {
      const states = await db.selectFrom('email_recipients').select(['state', (eb) => eb.fn.countAll().as('n')]).groupBy('state').execute();
      console.log(`svc stalled at ${n}/${target} delivered: ${JSON.stringify(states)}`);
      return;
    }
    await sleep(20);
  }
}

interface SvcFigures { acceptPerSec: number; endToEndPerSec: number; seconds: number; p50: number; p99: number; peakRssMb: number; outboundPeakRssMb: number; latencyPerSec: number; apiCpuMs: number; outboundCpuMs: number }

/** Peak resident memory of a child process so far (VmHWM), in MiB. */
function childPeakRssMb(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const kb = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0) / 1024;
}

/** `bin/svc start --role api` on the appliance's data folder, as under systemd; resolves once it answers. */
async function spawnApiProcess(app: TestAppliance, redis: TestRedis, dns: { address: string }): Promise<{ child: ChildProcess; baseUrl: string }> {
  const port = await freePort();
  const child = spawnRoleProcess('api', {
    SVC_DATA_DIR: app.config.data_dir, SVC_REDIS_URL: redis.url, SVC_DNS_SERVERS: dns.address, SVC_HTTP_HOST: '127.0.0.1', SVC_HTTP_PORT: String(port),
    SVC_LOG_LEVEL: 'warn', SVC_SCANNER_CLAMD: '', SVC_RATE_LIMIT_BURST: '1000000', SVC_RATE_LIMIT_PER_SECOND: '1000000', SVC_HTTP_BODY_LIMIT_MB: '50',
    ...(process.env.BENCH_API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_API_NODE_OPTIONS } : {}),
  }, process.env.BENCH_API_LOG);
  const baseUrl = `http://127.0.0.1:${port}`;
  const up = await waitUntil(async () => (await fetch(`${baseUrl}/health`).then((r) => r.status > 0, () => false)), 60_000);
  if (!up) throw new Error('the api process did not answer within 60 s');
  return { child, baseUrl };
}

async function runSvc(sinkPort: number): Promise<SvcFigures> {
  const redis = await startTestRedis();
  const dns = await startDnsServer({ 'sink.test.net': [{ type: 'MX', exchange: 'mx.sink.test.net', priority: 10 }], 'mx.sink.test.net': [{ type: 'A', value: '127.0.0.1' }] });
  // This process keeps the appliance's services (team creation, the delivered count) and no role:
  // the API and the outbound MTA each run as their own `bin/svc start --role …` process.
  const app = await startTestAppliance({ redis, roles: [], env: { SVC_DNS_SERVERS: dns.address } });
  let outbound: ChildProcess | undefined;
  let api: ChildProcess | undefined;
  try {
    const team = await app.newTeam('Bench');
    const apiProcess = await spawnApiProcess(app, redis, dns);
    api = apiProcess.child;
    const baseUrl = apiProcess.baseUrl;
    await verifyDomainThroughApi(baseUrl, team.token, dns, 'bench-sender.net');
    const db = app.appliance.services.database.db;
    const delivered = async () => Number((await db.selectFrom('email_recipients').select((eb) => eb.fn.countAll().as('n')).where('state', '=', 'delivered').executeTakeFirst())?.n ?? 0);
    outbound = spawnOutboundProcess({
      SVC_DATA_DIR: app.config.data_dir, SVC_REDIS_URL: redis.url, SVC_DNS_SERVERS: dns.address, SVC_OUTBOUND_PORT: String(sinkPort),
      SVC_LOG_LEVEL: 'warn', SVC_REGIONS: JSON.stringify({ 'us-east-1': { concurrency: SESSIONS, per_domain_connections: SESSIONS } }),
      ...(process.env.BENCH_OUTBOUND_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_OUTBOUND_NODE_OPTIONS } : {}),
      ...(process.env.BENCH_SIGN_THREADS ? { SVC_OUTBOUND_SIGN_THREADS: process.env.BENCH_SIGN_THREADS } : {}),
      ...(JSON.parse(process.env.BENCH_OUTBOUND_ENV ?? '{}') as Record<string, string>),
    }, process.env.BENCH_OUTBOUND_LOG);
    await sleep(1500);
    const item = (i: number) => ({ from: 'Bench <bench@bench-sender.net>', to: `sink${i}@sink.test.net`, subject: `Bench message ${i}`, text: BODY });
    const started = performance.now();
    const apiCpuBefore = childCpuSeconds(api.pid);
    const outboundCpuBefore = childCpuSeconds(outbound.pid);
    let next = 0;
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (next < MESSAGES) {
        const from = next;
        next = Math.min(MESSAGES, next + 100);
        const batch = Array.from({ length: next - from }, (_, k) => item(from + k));
        const r = await call(baseUrl, 'POST', '/emails/batch', { token: team.token, body: batch });
        if (r.status !== 200) throw new Error(`batch refused: ${JSON.stringify(r.body).slice(0, 300)}`);
      }
    }));
    const accepted = (performance.now() - started) / 1000;
    await untilDeliveredOrStalled(delivered, MESSAGES, db);
    const total = (performance.now() - started) / 1000;
    const count = await delivered();
    const apiCpuMs = ((childCpuSeconds(api.pid) - apiCpuBefore) * 1000) / Math.max(count, 1);
    const outboundCpuMs = ((childCpuSeconds(outbound.pid) - outboundCpuBefore) * 1000) / Math.max(count, 1);

    // Latency of single sends (each durable before its 200), 10 at a time.
    const latencies: number[] = [];
    let sentSingles = 0;
    const latencyStarted = performance.now();
    await Promise.all(Array.from({ length: 10 }, async () => {
      while (sentSingles < LATENCY_REQUESTS) {
        const i = MESSAGES + sentSingles++;
        const t0 = performance.now();
        const r = await call(baseUrl, 'POST', '/emails', { token: team.token, body: item(i) });
        latencies.push(performance.now() - t0);
        if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body).slice(0, 300)}`);
      }
    }));
    const latencyPerSec = LATENCY_REQUESTS / ((performance.now() - latencyStarted) / 1000);
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
    return {
      acceptPerSec: MESSAGES / accepted, endToEndPerSec: count / total, seconds: total,
      p50: pct(0.5), p99: pct(0.99), peakRssMb: childPeakRssMb(api.pid), outboundPeakRssMb: childPeakRssMb(outbound.pid), latencyPerSec, apiCpuMs, outboundCpuMs,
    };
  } finally {
    for (const child of [outbound, api]) {
      if (!child) continue;
      child.kill('SIGTERM');
      await exited(child);
    }
    await app.stop();
    await dns.stop();
    await redis.stop();
  }
}

async function main(): Promise<void> {
  ensurePostfix();
  const dir = mkdtempSync(join(tmpdir(), 'svc-send-bench-'));
  // postfix's own daemons (user postfix) must reach their queue inside it.
  chmodSync(dir, 0o755);
  const sinkPort = await freePort();
  const sink = startSink(sinkPort);
  try {
    await sleep(300);
    console.log(`send-throughput: ${MESSAGES} messages of 4 KB, ${SESSIONS} sessions, DKIM on (svc), sink: smtp-sink on 127.0.0.1:${sinkPort}`);
    const postfix = await runPostfix(sinkPort, join(dir, 'postfix'), { messages: MESSAGES, sessions: SESSIONS });
    const svc = await runSvc(sinkPort);
    const row = (name: string, accept: number, e2e: number, s: number) => `| ${name} | ${accept.toFixed(0)} | ${e2e.toFixed(0)} | ${s.toFixed(1)} |`;
    console.log('\n| relay | durable accept (msg/s) | accepted → delivered at the sink (msg/s) | seconds |\n| --- | --- | --- | --- |');
    console.log(row('Postfix 3.7 (smtp-source → postfix → smtp-sink)', postfix.acceptPerSec, postfix.endToEndPerSec, postfix.seconds));
    console.log(row('svc (POST /emails/batch → svc outbound → smtp-sink)', svc.acceptPerSec, svc.endToEndPerSec, svc.seconds));
    console.log(`\nsvc / Postfix, end to end: ${(svc.endToEndPerSec / postfix.endToEndPerSec).toFixed(2)}×`);
    console.log(`POST /emails (single, 10 concurrent): p50 ${svc.p50.toFixed(1)} ms, p99 ${svc.p99.toFixed(1)} ms, ${svc.latencyPerSec.toFixed(0)} req/s`);
    console.log(`svc peak RSS: API process ${svc.peakRssMb.toFixed(0)} MiB, outbound process ${svc.outboundPeakRssMb.toFixed(0)} MiB`);
    console.log(`svc CPU per delivered message: API process ${svc.apiCpuMs.toFixed(2)} ms, outbound process ${svc.outboundCpuMs.toFixed(2)} ms (with its signing threads)`);
    if (process.argv.includes('--crash') || process.env.BENCH_CRASH === '1') {
      console.log('\ncrash rig: 2,000 emails, kill -9 the outbound process 10 times during delivery …');
      const result = await runCrashRig({ emails: 2000, kills: 10, replyDelayMs: 20, concurrency: 10 });
      console.log(JSON.stringify(result));
      const ok = result.duplicates.length === 0 && Object.keys(result.other).length === 0 && result.deliveredNotAtMx === 0
        && result.delivered + result.failed.reduce((n, f) => n + f.count, 0) === result.accepted;
      console.log(ok ? 'crash rig: every email delivered exactly once or failed with a reason' : 'crash rig: FAILED');
      if (!ok) process.exitCode = 1;
    }
  } finally {
    sink.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (!rerunUnderServiceFlags()) await main();
