// The click-redirect route (GET /t/c/<token>) of a real appliance under 50 connections, beside a
// bare node http server answering the same 302 in the same run. Target: ≥ 10,000 req/s with
// p99 < 10 ms.
//
// Two loads on svc: `repeat` cycles through 200 genuine tokens (50 recipients × 4 links) with one
// user agent, so after the first hit of each every request is a repeat within the 10 s window and
// nothing is written (the route alone); `distinct` gives every request its own user agent, so every
// hit is recorded (an event and last_event in group-committed transactions, in the same process)
// and the answer rate shows what recording costs. Each load runs in a child process (autocannon's
// API), never on the server's event loop.
//
// Tuning (environment): BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (1), BENCH_CONNECTIONS (50).
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { trackingTokens } from '../core/tracking/index.js';
import { clickPath } from '../core/tracking/index.js';
import { startTestAppliance, type TestAppliance } from '../test/helpers/appliance.js';
import { call } from '../test/helpers/http.js';
import { fakeSendingDomains } from '../test/helpers/sending.js';
import { mailZone } from '../test/helpers/email-fixtures.js';
import { intFromEnv } from './settings.js';

const ROUNDS = intFromEnv('BENCH_ROUNDS', 3);
const SECONDS = intFromEnv('BENCH_SECONDS', 5);
const WARMUP_SECONDS = intFromEnv('BENCH_WARMUP_SECONDS', 1);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50);
const TARGET_RPS = 10_000;
const TARGET_P99_MS = 10;
const LINK = 'https://shop.example/item?a=1&b=2';

export interface Load {
  name: 'bare' | 'repeat' | 'distinct';
  origin: string;
  paths: string[];
  distinctAgents: boolean;
}

export interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** Requests not answered 302. */
  other: number;
  /** Microseconds of the server process's CPU (every thread) a request, its hits' commits included. */
  cpuUs: number;
}

/** Child mode: one autocannon run, its figures as JSON on stdout. */
async function child(spec: { origin: string; paths: string[]; distinctAgents: boolean; seconds: number; connections: number }): Promise<void> {
  const autocannon = createRequire(import.meta.url)('autocannon') as (o: object) => Promise<any>;
  let n = 0;
  const result = await autocannon({
    url: spec.origin, connections: spec.connections, duration: spec.seconds,
    requests: [{
      method: 'GET',
      setupRequest: (req: { headers?: Record<string, string> }) => {
        const i = n++;
        const agent = spec.distinctAgents ? `Mozilla/5.0 bench-reader/${i}` : 'Mozilla/5.0 bench-reader';
        return { ...req, path: spec.paths[i % spec.paths.length], headers: { ...req.headers, 'user-agent': agent } };
      },
    }],
  });
  const redirects = Number(result.statusCodeStats?.['302']?.count ?? 0);
  const total = Number(result.requests.total) + Number(result.errors) + Number(result.timeouts);
  process.stdout.write(JSON.stringify({ rps: result.requests.total / result.duration, requests: result.requests.total, p50: result.latency.p50, p99: result.latency.p99, other: total - redirects }));
}

function run(load: Load, seconds: number, connections: number): Promise<Omit<Sample, 'cpuUs'> & { requests: number }> {
  const spec = JSON.stringify({ origin: load.origin, paths: load.paths, distinctAgents: load.distinctAgents, seconds, connections });
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [new URL(import.meta.url).pathname, '--child', spec], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    proc.once('error', reject);
    proc.once('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Omit<Sample, 'cpuUs'> & { requests: number }) : reject(new Error(`load child exited ${code}`))));
  });
}

async function startBare(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(302, { location: LINK, 'cache-control': 'no-store', 'content-length': '0' });
    res.end();
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A real email to 50 recipients (queued: no outbound role) and 200 genuine click tokens for it. */
async function tokensFor(svc: TestAppliance): Promise<string[]> {
  const team = await svc.newTeam('Bench');
  fakeSendingDomains(svc).add({ teamId: team.teamId, name: 'bench-sender.net' });
  const to = Array.from({ length: 50 }, (_, i) => `reader${i}@inbox-one.net`);
  const sent = await call(svc.baseUrl, 'POST', '/emails', { token: team.token, body: { from: 'news@bench-sender.net', to, subject: 'Bench', html: '<p>x</p>' } });
  if (sent.status !== 200) throw new Error(`send refused: ${JSON.stringify(sent.body)}`);
  const tokens = trackingTokens(svc.appliance.services.secretBox.derive('tracking v1'));
  const mintedAt = Math.floor(Date.now() / 1000) - 3600;
  return to.flatMap((_, recipientIdx) => [0, 1, 2, 3].map((linkIdx) =>
    clickPath(tokens.mint({ kind: 'click', emailId: sent.body.id as string, recipientIdx, mintedAt, linkIdx, url: `${LINK}&l=${linkIdx}` }))));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
export const fmt = (s: Sample) => `${s.rps.toFixed(0).padStart(6)} req/s  p50 ${s.p50} ms  p99 ${s.p99} ms  CPU ${s.cpuUs.toFixed(0)} µs a request${s.other ? `  (${s.other} not 302)` : ''}`;

export interface ClickOptions {
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  log(line: string): void;
}

export interface ClickFigures {
  /** The median of each figure over the rounds, by load (bare, repeat, distinct). */
  medians: Map<Load['name'], Sample>;
  /** A svc load's verdict against the target. */
  verdict(sample: Sample): string;
  stats: { recorded: number; repeats: number; dropped: number };
  /** Every answer was a 302. */
  ok: boolean;
}

/** The click route's rounds on a fresh appliance of its own (bare, repeat, distinct alternating); other benches import it. */
export async function measureClicks(options: ClickOptions): Promise<ClickFigures> {
  const dns = await mailZone(['inbox-one.net']);
  const svc = await startTestAppliance({ roles: ['api'], env: { SVC_TRACKING_FLUSH_MS: '200', SVC_DNS_SERVERS: dns.address } });
  const bare = await startBare();
  try {
    const paths = await tokensFor(svc);
    const check = await fetch(svc.baseUrl + paths[0], { redirect: 'manual' });
    if (check.status !== 302) throw new Error(`the click route answered ${check.status}`);
    const loads: Load[] = [
      { name: 'bare', origin: bare.origin, paths: ['/r'], distinctAgents: false },
      { name: 'repeat', origin: svc.baseUrl, paths, distinctAgents: false },
      { name: 'distinct', origin: svc.baseUrl, paths, distinctAgents: true },
    ];
    const samples = new Map<Load['name'], Sample[]>(loads.map((l) => [l.name, []]));
    const tracking = svc.appliance.services.api.sending.tracking;
    for (let round = 1; round <= options.rounds; round++) {
      for (const load of loads) {
        await run(load, options.warmupSeconds, options.connections);
        await tracking.flush();
        // The server's CPU over the run and its hits' commits; the load's process is not counted.
        const cpuBefore = process.cpuUsage();
        const { requests, ...figures } = await run(load, options.seconds, options.connections);
        await tracking.flush();
        const cpu = process.cpuUsage(cpuBefore);
        const sample = { ...figures, cpuUs: (cpu.user + cpu.system) / Math.max(requests, 1) };
        samples.get(load.name)!.push(sample);
        options.log(`round ${round} ${load.name.padEnd(8)} ${fmt(sample)}`);
      }
    }
    await tracking.flush();
    const medians = new Map<Load['name'], Sample>();
    for (const [name, s] of samples) {
      medians.set(name, {
        rps: median(s.map((x) => x.rps)), p50: median(s.map((x) => x.p50)), p99: median(s.map((x) => x.p99)),
        other: s.reduce((a, x) => a + x.other, 0), cpuUs: median(s.map((x) => x.cpuUs)),
      });
    }
    const verdict = (m: Sample) => `target ≥ ${TARGET_RPS} req/s, p99 < ${TARGET_P99_MS} ms: ${m.rps >= TARGET_RPS && m.p99 < TARGET_P99_MS ? 'met' : 'NOT MET'}`;
    return { medians, verdict, stats: tracking.stats(), ok: [...medians.values()].every((m) => m.other === 0) };
  } finally {
    await new Promise((r) => bare.server.close(r));
    await svc.stop();
    await dns.stop();
  }
}

async function main(): Promise<number> {
  console.log(`tracking: GET /t/c/<token>, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s (+${WARMUP_SECONDS} s warm-up), node ${process.version}`);
  const figures = await measureClicks({ rounds: ROUNDS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS, log: (line) => console.log(line) });
  console.log('');
  for (const [name, m] of figures.medians) console.log(`median ${name.padEnd(8)} ${fmt(m)}${name === 'bare' ? '' : `  ${figures.verdict(m)}`}`);
  const stats = figures.stats;
  console.log(`hits recorded ${stats.recorded}, repeats ${stats.repeats}, not recorded (no room) ${stats.dropped}`);
  return figures.ok ? 0 : 1;
}

// Run as a program (or as the load child); imported by another bench, it only exports.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--child') {
    await child(JSON.parse(process.argv[3]!));
  } else {
    process.exitCode = await main().catch((err: unknown) => { console.error(err); return 1; });
  }
}
