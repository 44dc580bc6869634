// What the contract layer (route match, User-Agent, Bearer auth in SQLite, rate limit in Redis,
// request log) costs: an authenticated `GET /api-keys?limit=1` on a real appliance against a bare
// express 5 handler sending the same JSON, both served by this process, one load generator.
//
// The machines are shared and noisy, so only the ratio measured within one run means anything:
// the two targets alternate round by round and the medians are compared.
//
// Tuning (environment): BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (1),
// BENCH_CONNECTIONS (50).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import express from 'express';
import { schema } from '../config/schema.js';
import { listenTcp, type Listening } from '../api/server.js';
import { startTestAppliance, type TestAppliance } from '../test/helpers/appliance.js';
import { rerunUnderServiceFlags } from './service-flags.js';
import { intFromEnv } from './settings.js';

const ROUNDS = intFromEnv('BENCH_ROUNDS', 3);
const SECONDS = intFromEnv('BENCH_SECONDS', 5);
const WARMUP_SECONDS = intFromEnv('BENCH_WARMUP_SECONDS', 1);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50);
const PATH = '/api-keys?limit=1';
const USER_AGENT = 'svc-bench/1.0';
/** The cost the contract layer may take from bare express throughput before it needs work. */
const TARGET_COST = 0.3;

/** Set by Ctrl-C: the rounds stop and main's finally still removes the temp folder and redis. */
let interrupted = false;

interface Target {
  /** bare: the body alone; endpoint: the endpoint's own work (the same list call) without the contract layer; svc: everything. */
  name: 'bare' | 'endpoint' | 'svc';
  url: string;
  headers: Record<string, string>;
}

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** Status code → count, with 'error' and 'timeout' for requests that got no answer. */
  statuses: Record<string, number>;
  /**
   * Server CPU (user + system) per request, in µs. Both servers run in this process and the load
   * generator in a child, so this is what one request costs the server — far steadier than req/s on
   * a machine whose neighbours come and go.
   */
  cpuUs: number;
}

/** The part of autocannon's --json output this script reads. */
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  requests: { total: number };
  latency: { p50: number; p99: number };
  statusCodeStats: Record<string, { count: number }>;
}

async function main(): Promise<number> {
  const svc = await startTestAppliance({
    env: {
      // Raised so the run measures the work of the rate-limit script, never its 429s.
      SVC_RATE_LIMIT_PER_SECOND: '1000000',
      SVC_RATE_LIMIT_BURST: '1000000',
      // The test helper flushes logs every 20 ms; measure the shipped default instead.
      SVC_LOGS_FLUSH_MS: String(schema.logs_flush_ms.default),
    },
  });
  let bare: Listening | undefined;
  try {
    const { token, teamId } = await svc.newTeam('Bench');
    const svcTarget: Target = { name: 'svc', url: svc.baseUrl + PATH, headers: { authorization: `Bearer ${token}`, 'user-agent': USER_AGENT } };
    const body = await fetchOk(svcTarget);
    bare = await startBareExpress(body, () => svc.appliance.services.api.foundation.apiKeys.list(teamId, { limit: '1' }));
    const bareTarget: Target = { name: 'bare', url: `http://127.0.0.1:${bare.port}${PATH}`, headers: { 'user-agent': USER_AGENT } };
    const endpointTarget: Target = { name: 'endpoint', url: `http://127.0.0.1:${bare.port}/endpoint${PATH}`, headers: { 'user-agent': USER_AGENT } };
    await fetchOk(bareTarget);
    await fetchOk(endpointTarget);
    return await compare([bareTarget, endpointTarget, svcTarget], svc);
  } finally {
    await bare?.close();
    await svc.stop();
  }
}

/** One real answer from the appliance: proves the set-up works and gives the bare handler its body. */
async function fetchOk(target: Target): Promise<unknown> {
  const res = await fetch(target.url, { headers: target.headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${target.name} answered ${res.status} before the run: ${text}`);
  return JSON.parse(text);
}

/** Same express version and the same server settings as the appliance, none of its middleware. */
async function startBareExpress(body: unknown, endpointWork: () => Promise<unknown>): Promise<Listening> {
  const app = express();
  // The appliance turns these off too; leaving them on would charge bare for work svc skips.
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/api-keys', (_req, res) => { res.json(body); });
  // The endpoint's own work — the same service call on the same database — with no contract layer.
  app.get('/endpoint/api-keys', (_req, res, next) => { endpointWork().then((list) => res.json(list), next); });
  return listenTcp(app, '127.0.0.1', 0);
}

async function compare(targets: Target[], appliance: TestAppliance): Promise<number> {
  printHeader(appliance);
  const rssBefore = process.memoryUsage().rss;
  const samples: Record<Target['name'], Sample[]> = { bare: [], endpoint: [], svc: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const target of targets) {
      if (interrupted) throw new Error('interrupted');
      const warm = await load(target, WARMUP_SECONDS);
      const sample = await load(target, SECONDS);
      samples[target.name].push(sample);
      console.log(`round ${round} ${target.name.padEnd(8)} ${fmtSample(sample)}  (warm-up ${fmtStatuses(warm.statuses)})`);
      if (!allOk(warm) || !allOk(sample)) {
        console.log(`FAIL: ${target.name} answered something other than 200; its figures are not comparable.`);
        return 1;
      }
    }
  }
  printSummary(samples.bare, samples.svc, rssBefore);
  printContractAlone(samples.endpoint, samples.svc);
  return 0;
}

/**
 * autocannon in a child process: on two cores, sharing the event loop (or fighting a worker thread
 * for the server's GC) with the server under test would bend both figures.
 */
async function load(target: Target, seconds: number): Promise<Sample> {
  const cli = createRequire(import.meta.url).resolve('autocannon');
  const headerArgs = Object.entries(target.headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]);
  const args = [cli, '--json', '--no-progress', '-c', String(CONNECTIONS), '-d', String(seconds), ...headerArgs, target.url];
  const cpuBefore = process.cpuUsage();
  const out = await runChild(process.execPath, args);
  const cpu = process.cpuUsage(cpuBefore);
  const sample = toSample(JSON.parse(out) as AutocannonResult);
  const requests = Object.values(sample.statuses).reduce((a, b) => a + b, 0);
  return { ...sample, cpuUs: (cpu.user + cpu.system) / Math.max(1, requests) };
}

function runChild(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0 && stdout.trim()) resolve(stdout);
      else reject(new Error(`autocannon exited ${code}: ${stderr.trim()}`));
    });
  });
}

function toSample(r: AutocannonResult): Sample {
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(r.statusCodeStats)) statuses[code] = count;
  if (r.errors) statuses.error = r.errors;
  if (r.timeouts) statuses.timeout = r.timeouts;
  return { rps: r.requests.total / r.duration, p50: r.latency.p50, p99: r.latency.p99, statuses, cpuUs: 0 };
}

function allOk(s: Sample): boolean {
  return Object.keys(s.statuses).every((code) => code === '200') && (s.statuses['200'] ?? 0) > 0;
}

/** Median of each figure on its own: rounds are noisy, and one slow round should not pull the result. */
function median(samples: Sample[]): Sample {
  const mid = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const m = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
  };
  const statuses: Record<string, number> = {};
  for (const s of samples) for (const [code, n] of Object.entries(s.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  return { rps: mid(samples.map((s) => s.rps)), p50: mid(samples.map((s) => s.p50)), p99: mid(samples.map((s) => s.p99)), statuses, cpuUs: mid(samples.map((s) => s.cpuUs)) };
}

function printHeader(appliance: TestAppliance): void {
  console.log(`http-baseline: GET ${PATH}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s (+${WARMUP_SECONDS} s warm-up each), node ${process.version}, express ${expressVersion()}`);
  console.log(`svc: rate limit ${appliance.config.rate_limit_per_second}/s burst ${appliance.config.rate_limit_burst}, request log flush ${appliance.config.logs_flush_ms} ms, sqlite ${appliance.config.sqlite_synchronous}`);
}

function printSummary(bareRounds: Sample[], svcRounds: Sample[], rssBefore: number): void {
  const bare = median(bareRounds);
  const svc = median(svcRounds);
  const ratio = svc.rps / bare.rps;
  // Each round's pair ran back to back under the same load from the neighbours: their spread
  // shows how far the machine's noise moves the ratio.
  const paired = svcRounds.map((s, i) => (s.rps / bareRounds[i]!.rps).toFixed(2));
  console.log('');
  console.log(`median bare ${fmtSample(bare)}`);
  console.log(`median svc  ${fmtSample(svc)}`);
  console.log(`all responses 200: bare ${fmtStatuses(bare.statuses)}, svc ${fmtStatuses(svc.statuses)}`);
  console.log(`whole request (contract layer + the endpoint's own list query) vs a static body: svc/bare throughput ${ratio.toFixed(2)} (per round: ${paired.join(', ')}), CPU ${bare.cpuUs.toFixed(0)} → ${svc.cpuUs.toFixed(0)} µs a request (for information: the static body does none of the endpoint's work)`);
  // Both servers live in this process; the bare one adds little next to the appliance's stores.
  console.log(`server process RSS: ${mib(rssBefore)} MiB before the rounds, ${mib(process.memoryUsage().rss)} MiB after`);
}

/**
 * svc against express doing the endpoint's own work (the same list call on the same database):
 * the difference is the contract layer the target is about (auth lookup, rate-limit script,
 * request log, with routing and validation).
 */
function printContractAlone(endpointRounds: Sample[], svcRounds: Sample[]): void {
  const endpoint = median(endpointRounds);
  const svc = median(svcRounds);
  const cost = 1 - svc.rps / endpoint.rps;
  const cpuCost = 1 - endpoint.cpuUs / svc.cpuUs;
  const paired = svcRounds.map((s, i) => `${((1 - s.rps / endpointRounds[i]!.rps) * 100).toFixed(0)}%`);
  const verdict = cost < TARGET_COST ? 'within target' : 'OVER TARGET';
  console.log(`median endpoint ${fmtSample(endpoint)}  (express + the same list call, no contract layer)`);
  console.log(`contract layer (auth, rate-limit script, request log, validation, routing): costs ${(cost * 100).toFixed(0)}% of the endpoint's throughput (per round: ${paired.join(', ')}); target < ${TARGET_COST * 100}% (${verdict})`);
  console.log(`contract layer CPU: ${(svc.cpuUs - endpoint.cpuUs).toFixed(0)} µs a request, ${(cpuCost * 100).toFixed(0)}% of svc's (${cpuCost < TARGET_COST ? 'within target' : 'OVER TARGET'})`);
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

function fmtSample(s: Sample): string {
  return `${s.rps.toFixed(0).padStart(6)} req/s  p50 ${s.p50} ms  p99 ${s.p99} ms  cpu ${s.cpuUs.toFixed(0)} µs/req`;
}

function fmtStatuses(statuses: Record<string, number>): string {
  return Object.entries(statuses).map(([code, n]) => `${n}×${code}`).join(' ');
}

function expressVersion(): string {
  return (createRequire(import.meta.url)('express/package.json') as { version: string }).version;
}

process.once('SIGINT', () => { interrupted = true; });
if (!rerunUnderServiceFlags()) process.exitCode = await main().catch((err: unknown) => {
  console.error(interrupted ? 'http-baseline: interrupted, cleaned up' : err);
  return 1;
});
