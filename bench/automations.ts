// Custom events and automation runs, in one run:
// 1. accept: `POST /events/send` under 50 connections (autocannon in a child process) against a
//    real appliance (api role; each 202 means the event and the run it enrols committed, fsynced),
//    alternating round by round with a bare express server that parses the same JSON body and
//    answers the same 202 — the same-run reference. Target ≥ 2,000 events/s.
// 2. enrolment to first step: a `bin/svc start --role jobs` child (woken through Redis) works
//    runs enrolled at a steady pace; the latency is the run's creation to its first step after
//    the trigger (a delay step's `waiting` record).
// 3. wake-up: BENCH_WAKE_RUNS (100,000) runs parked on a delay step are written straight into
//    the tables (as the runner leaves them), then their wake time is moved to a few seconds ahead
//    — a clock moving past a shared `until`, every run due at once, the hardest case — and the
//    jobs child wakes them. Lateness = the delay step's completion minus its due time. Target p99 < 5 s.
//
// Tuning (environment): BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (1),
// BENCH_CONNECTIONS (50), BENCH_LATENCY_EVENTS (1000), BENCH_LATENCY_RATE (200 a second),
// BENCH_WAKE_RUNS (100000), BENCH_JOBS_NODE_OPTIONS (added to the jobs unit's NODE_OPTIONS,
// e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_JOBS_ENV (JSON of extra `SVC_*` settings for it, e.g.
// `{"SVC_WORK_CONCURRENCY":"4"}`), BENCH_PROFILE_DIR (a CPU profile of this process over each
// measured svc load: the API's side alone), BENCH_PHASES (accept,latency,wake: those to run).
// `--quick`: one round, 200 latency events, 10,000 parked runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { listenTcp, type Listening } from '../api/server.js';
import { schema } from '../config/schema.js';
import { PLATFORM_STREAM_WORK } from '../core/automations/index.js';
import { newId } from '../core/ids.js';
import { inWriteTransaction, type Db } from '../storage/sql/index.js';
import { startTestAppliance, type TestAppliance } from '../test/helpers/appliance.js';
import { exitWithin, waitFor } from '../test/helpers/deadline.js';
import { svcBin } from '../test/helpers/faults-svc.js';
import { call } from '../test/helpers/http.js';
import { childCpuSeconds } from './postfix.js';
import { intFromEnv } from './settings.js';
import { jobsUnitNodeOptions } from './service-flags.js';

const quick = process.argv.includes('--quick');
const ROUNDS = intFromEnv('BENCH_ROUNDS', quick ? 1 : 3);
const SECONDS = intFromEnv('BENCH_SECONDS', 5);
const WARMUP_SECONDS = intFromEnv('BENCH_WARMUP_SECONDS', 1);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50);
const LATENCY_EVENTS = intFromEnv('BENCH_LATENCY_EVENTS', quick ? 200 : 1000);
const LATENCY_RATE = intFromEnv('BENCH_LATENCY_RATE', 200);
const WAKE_RUNS = intFromEnv('BENCH_WAKE_RUNS', quick ? 10_000 : 100_000);
const CONTACTS = 200;
const PHASES = new Set((process.env.BENCH_PHASES ?? 'accept,latency,wake').split(',').map((p) => p.trim()));
const TARGET_EVENTS_PER_S = 2_000;
const TARGET_WAKE_P99_MS = 5_000;

interface Sample { rps: number; p50: number; p99: number; accepted: number; other: number; cpuUs: number }
interface Bench { svc: TestAppliance; token: string; teamId: string; contacts: string[]; db: Db }

/** Child mode: one autocannon run of POST /events/send cycling over the contacts; figures as JSON. */
async function child(spec: { url: string; token: string; contacts: string[]; seconds: number; connections: number }): Promise<void> {
  const autocannon = createRequire(import.meta.url)('autocannon') as (o: object) => Promise<any>;
  let n = 0;
  const result = await autocannon({
    url: spec.url, connections: spec.connections, duration: spec.seconds, method: 'POST',
    headers: { authorization: `Bearer ${spec.token}`, 'content-type': 'application/json', 'user-agent': 'svc-bench/1.0' },
    requests: [{
      setupRequest: (req: object) => {
        const contact = spec.contacts[n++ % spec.contacts.length];
        return { ...req, body: JSON.stringify({ event: 'bench.signup', contact_id: contact, payload: { plan: 'pro', seats: n % 50 } }) };
      },
    }],
  });
  const accepted = Number(result.statusCodeStats?.['202']?.count ?? 0);
  const total = Number(result.requests.total) + Number(result.errors) + Number(result.timeouts);
  process.stdout.write(JSON.stringify({ rps: accepted / result.duration, p50: result.latency.p50, p99: result.latency.p99, accepted, other: total - accepted }));
}

function load(url: string, bench: Bench, seconds: number): Promise<Sample> {
  const spec = JSON.stringify({ url, token: bench.token, contacts: bench.contacts, seconds, connections: CONNECTIONS });
  const cpuBefore = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [new URL(import.meta.url).pathname, '--child', spec], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    proc.once('error', reject);
    proc.once('close', (code) => {
      if (code !== 0) return reject(new Error(`load child exited ${code}`));
      const cpu = process.cpuUsage(cpuBefore);
      const s = JSON.parse(out) as Omit<Sample, 'cpuUs'>;
      resolve({ ...s, cpuUs: (cpu.user + cpu.system) / Math.max(1, s.accepted + s.other) });
    });
  });
}

/** The reference: the same express, the same JSON body parsed, the same 202 — none of svc's work. */
function startBare(): Promise<Listening> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.post('/events/send', express.json(), (req, res) => { res.status(202).json({ object: 'event', event: req.body.event }); });
  return listenTcp(app, '127.0.0.1', 0);
}

async function setUp(): Promise<Bench> {
  const svc = await startTestAppliance({
    env: { SVC_RATE_LIMIT_PER_SECOND: '1000000', SVC_RATE_LIMIT_BURST: '1000000', SVC_LOGS_FLUSH_MS: String(schema.logs_flush_ms.default) },
  });
  const { token, teamId } = await svc.newTeam('Bench flows');
  const bench: Bench = { svc, token, teamId, contacts: [], db: svc.appliance.services.database.db };
  for (const name of ['bench.signup', 'bench.latency', 'bench.wake']) await api(bench, 'POST', '/events', { name });
  for (let i = 0; i < CONTACTS; i++) bench.contacts.push((await api(bench, 'POST', '/contacts', { email: `reader${i}@inbox-one.net` })).id as string);
  return bench;
}

async function api(bench: Bench, method: string, path: string, body?: unknown): Promise<any> {
  const r = await call(bench.svc.baseUrl, method, path, { token: bench.token, body });
  if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** An enabled automation: the event's trigger, then one delay step (parked for an hour unless told). */
async function parkingAutomation(bench: Bench, event: string, delay: Record<string, string>): Promise<string> {
  const created = await api(bench, 'POST', '/automations', {
    name: `Bench ${event}`, status: 'enabled',
    steps: [{ key: 'start', type: 'trigger', config: { event_name: event } }, { key: 'pause', type: 'delay', config: delay }],
    connections: [{ from: 'start', to: 'pause' }],
  });
  return created.id as string;
}

async function acceptPhase(bench: Bench): Promise<void> {
  const automationId = await parkingAutomation(bench, 'bench.signup', { duration: '1 hour' });
  const bare = await startBare();
  const samples: Record<'bare' | 'svc', Sample[]> = { bare: [], svc: [] };
  let accepted = 0;
  try {
    console.log(`accept: POST /events/send, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s (+${WARMUP_SECONDS} s warm-up), ${CONTACTS} contacts, one enabled automation per event (a run enrolled with each 202)`);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [name, url] of [['bare', `http://127.0.0.1:${bare.port}/events/send`], ['svc', `${bench.svc.baseUrl}/events/send`]] as const) {
        const warm = await load(url, bench, WARMUP_SECONDS);
        const profile = name === 'svc' ? await startProfile() : undefined;
        const s = await load(url, bench, SECONDS);
        await profile?.(`accept-round${round}`);
        if (name === 'svc') accepted += warm.accepted + s.accepted;
        samples[name].push(s);
        console.log(`round ${round} ${name.padEnd(4)} ${fmt(s)}`);
        if (s.other || warm.other) throw new Error(`${name}: ${s.other + warm.other} requests not answered 202`);
      }
    }
  } finally {
    await bare.close();
  }
  const svc = median(samples.svc);
  const ref = median(samples.bare);
  const rows = await bench.db.selectFrom('automation_runs').select((eb) => eb.fn.countAll<number>().as('n')).where('automation_id', '=', automationId).executeTakeFirstOrThrow();
  console.log(`median bare ${fmt(ref)}`);
  console.log(`median svc  ${fmt(svc)}`);
  console.log(`svc/bare ${(svc.rps / ref.rps).toFixed(2)} (per round: ${samples.svc.map((s, i) => (s.rps / samples.bare[i]!.rps).toFixed(2)).join(', ')}); runs enrolled ${Number(rows.n)} for ${accepted} events counted 202 (and those in flight at each load's end)`);
  console.log(`events accepted: ${svc.rps.toFixed(0)}/s; target ≥ ${TARGET_EVENTS_PER_S}/s (${svc.rps >= TARGET_EVENTS_PER_S ? 'within target' : 'BELOW TARGET'})`);
  // Requests still in flight when a load ends are answered but not counted: a few more runs than 202s.
  if (Number(rows.n) < accepted) throw new Error(`runs enrolled ${rows.n} < events answered 202 ${accepted}`);
  // The backlog would stand in front of the next phases' runs: stopping cancels it.
  await api(bench, 'POST', `/automations/${automationId}/stop`);
}

/** With BENCH_PROFILE_DIR: this process's CPU profile over one measured svc load (the API's side alone). */
async function startProfile(): Promise<((label: string) => Promise<void>) | undefined> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async (label) => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(dir, `automations-${label}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

function spawnJobs(bench: Bench): ChildProcess {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_MAIL_HOSTNAME: 'mta.svc-test.net',
    SVC_DATA_DIR: bench.svc.config.data_dir, SVC_REDIS_URL: bench.svc.redis.url, SVC_LOG_LEVEL: 'error', SVC_SCANNER_CLAMD: '',
    // As the installed unit runs it (its heap settings), then the bench's own (a profile).
    NODE_OPTIONS: jobsUnitNodeOptions(process.env.BENCH_JOBS_NODE_OPTIONS),
    ...(JSON.parse(process.env.BENCH_JOBS_ENV ?? '{}') as Record<string, string>),
  };
  return spawn(svcBin, ['start', '--role', 'jobs'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

const delayRecords = (bench: Bench, automationId: string) => bench.db.selectFrom('automation_run_steps')
  .innerJoin('automation_runs', 'automation_runs.id', 'automation_run_steps.run_id')
  .select(['automation_runs.created_at as enrolled', 'automation_run_steps.created_at as reached', 'automation_run_steps.completed_at as woke'])
  .where('automation_runs.automation_id', '=', automationId).where('automation_run_steps.step_key', '=', 'pause');

/** Up once it has stepped its standing platform-stream reader (enqueued and worked at start). */
async function jobsReady(bench: Bench, spawnedAt: string): Promise<void> {
  await waitFor('the jobs process to start working', async () => (await bench.db.selectFrom('work_items').select('id')
    .where('kind', '=', PLATFORM_STREAM_WORK.kind).where('updated_at', '>=', spawnedAt).executeTakeFirst()) !== undefined, 120_000, 100);
}

async function latencyPhase(bench: Bench): Promise<void> {
  const automationId = await parkingAutomation(bench, 'bench.latency', { duration: '1 hour' });
  const started = Date.now();
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    // A steady pace: each event at its slot, whether or not the previous 202 came back.
    const due = started + (i * 1000) / LATENCY_RATE;
    if (due > Date.now()) await sleep(due - Date.now());
    sends.push(api(bench, 'POST', '/events/send', { event: 'bench.latency', contact_id: bench.contacts[i % CONTACTS] }));
  }
  await Promise.all(sends);
  await waitFor('every latency run to reach its first step', async () => (await delayRecords(bench, automationId).execute()).length >= LATENCY_EVENTS, 120_000, 100);
  const ms = (await delayRecords(bench, automationId).execute()).map((r) => Date.parse(r.reached) - Date.parse(r.enrolled));
  console.log(`enrolment → first step (${LATENCY_EVENTS} events at ${LATENCY_RATE}/s; jobs role in its own process, woken through Redis, work poll ${schema.work_poll_ms.default} ms as shipped): ${pct(ms)}`);
}

/** Runs as the runner leaves them parked on `pause`: the run, its two step records, its work item. */
async function writeParkedRuns(bench: Bench, automationId: string, parkedUntil: string): Promise<void> {
  const now = new Date().toISOString();
  const chunk = 500;
  for (let start = 0; start < WAKE_RUNS; start += 10_000) {
    await inWriteTransaction(bench.db, async (trx) => {
      for (let from = start; from < Math.min(start + 10_000, WAKE_RUNS); from += chunk) {
        const ids = Array.from({ length: Math.min(chunk, WAKE_RUNS - from) }, () => newId());
        await trx.insertInto('automation_runs').values(ids.map((id, i) => ({
          id, team_id: bench.teamId, automation_id: automationId, version: 1, contact_id: bench.contacts[(from + i) % CONTACTS]!, source_event_id: newId(),
          event_name: 'bench.wake', event_data: '{}', status: 'running', error: null, created_at: now, started_at: now, completed_at: null,
        }))).execute();
        await trx.insertInto('automation_run_steps').values(ids.flatMap((id) => [
          { run_id: id, step_key: 'start', type: 'trigger', status: 'completed', output: '{"event":"bench.wake"}', error: null, created_at: now, started_at: now, completed_at: now },
          { run_id: id, step_key: 'pause', type: 'delay', status: 'waiting', output: `{"until":"${parkedUntil}"}`, error: null, created_at: now, started_at: now, completed_at: null },
        ])).execute();
        await trx.insertInto('work_items').values(ids.map((id) => ({
          id: newId(), kind: 'automation_run', key: id, team_id: bench.teamId, state: 'queued', due_at: parkedUntil, lease_owner: null, lease_until: null,
          steps: 2, payload: JSON.stringify({ run_id: id }), cursor: JSON.stringify({ at: 'pause', wakeAt: parkedUntil }), error: null, created_at: now, updated_at: now,
        }))).execute();
      }
    });
  }
}

async function wakePhase(bench: Bench, jobsPid: number): Promise<void> {
  const parkedUntil = new Date(Date.now() + 3600_000).toISOString();
  const automationId = await parkingAutomation(bench, 'bench.wake', { until: parkedUntil });
  const writing = Date.now();
  await writeParkedRuns(bench, automationId, parkedUntil);
  const wroteS = (Date.now() - writing) / 1000;
  // The clock reaches the shared `until`: every parked run falls due at the same instant.
  const dueAt = new Date(Date.now() + 3_000).toISOString();
  await inWriteTransaction(bench.db, (trx) => trx.updateTable('work_items').set({ due_at: dueAt, cursor: JSON.stringify({ at: 'pause', wakeAt: dueAt }) })
    .where('kind', '=', 'automation_run').where('due_at', '=', parkedUntil).execute());
  const cpuBefore = process.cpuUsage();
  const jobsCpuBefore = childCpuSeconds(jobsPid);
  const jobsMainBefore = childCpuSeconds(jobsPid, true);
  await waitFor(`all ${WAKE_RUNS} parked runs to wake and complete`, async () => {
    const open = await bench.db.selectFrom('automation_runs').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('automation_id', '=', automationId).where('status', '=', 'running').executeTakeFirstOrThrow();
    return Number(open.n) === 0;
  }, 1_800_000, 500);
  const jobsCpuS = childCpuSeconds(jobsPid) - jobsCpuBefore;
  const jobsMainS = childCpuSeconds(jobsPid, true) - jobsMainBefore;
  const rows = await delayRecords(bench, automationId).execute();
  const late = rows.map((r) => Date.parse(r.woke!) - Date.parse(dueAt));
  const p99 = quantile(late, 0.99);
  const lastS = Math.max(...late) / 1000;
  const concurrency = (JSON.parse(process.env.BENCH_JOBS_ENV ?? '{}') as Record<string, string>).SVC_WORK_CONCURRENCY ?? schema.work_concurrency.default;
  console.log(`wake-up: ${WAKE_RUNS} parked runs written in ${wroteS.toFixed(1)} s, all due at once; work concurrency ${concurrency}; woken and completed in ${lastS.toFixed(1)} s = ${(WAKE_RUNS / Math.max(lastS, 0.001)).toFixed(0)} runs/s (this process's CPU meanwhile ${((process.cpuUsage(cpuBefore).user + process.cpuUsage(cpuBefore).system) / 1e6).toFixed(1)} s: the polling)`);
  // CPU, unlike the wall time, hardly moves with what else the shared machine runs meanwhile.
  console.log(`wake-up: the jobs process used ${jobsCpuS.toFixed(2)} CPU s = ${(jobsCpuS * 1e6 / WAKE_RUNS).toFixed(0)} µs a run; its main thread ${(jobsMainS * 1e6 / WAKE_RUNS).toFixed(0)} µs a run, busy ${(jobsMainS / Math.max(lastS, 0.001) * 100).toFixed(0)} % of the wall time`);
  console.log(`wake-up lateness after the due time: ${pct(late)}; target p99 < ${TARGET_WAKE_P99_MS / 1000} s (${p99 < TARGET_WAKE_P99_MS ? 'within target' : 'OVER TARGET'})`);
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
const pct = (ms: number[]) => `p50 ${quantile(ms, 0.5).toFixed(0)} ms, p99 ${quantile(ms, 0.99).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms`;
const fmt = (s: Sample) => `${s.rps.toFixed(0).padStart(6)} req/s  p50 ${s.p50} ms  p99 ${s.p99} ms  cpu ${s.cpuUs.toFixed(0)} µs/req`;

function median(samples: Sample[]): Sample {
  const mid = (values: number[]) => quantile(values, 0.5);
  return {
    rps: mid(samples.map((s) => s.rps)), p50: mid(samples.map((s) => s.p50)), p99: mid(samples.map((s) => s.p99)),
    accepted: samples.reduce((a, s) => a + s.accepted, 0), other: samples.reduce((a, s) => a + s.other, 0), cpuUs: mid(samples.map((s) => s.cpuUs)),
  };
}

async function main(): Promise<number> {
  const bench = await setUp();
  let jobs: ChildProcess | undefined;
  try {
    console.log(`automations bench, node ${process.version}, sqlite ${bench.svc.config.sqlite_synchronous}${quick ? ' (--quick)' : ''}`);
    if (PHASES.has('accept')) await acceptPhase(bench);
    const spawnedAt = new Date().toISOString();
    jobs = spawnJobs(bench);
    await jobsReady(bench, spawnedAt);
    if (PHASES.has('latency')) await latencyPhase(bench);
    if (PHASES.has('wake')) await wakePhase(bench, jobs.pid!);
    return 0;
  } finally {
    if (jobs) {
      const exited = exitWithin('the jobs child to exit', jobs, 60_000);
      // SIGTERM: a profiled child writes its profile on the way out.
      jobs.kill('SIGTERM');
      await exited;
    }
    await bench.svc.stop();
  }
}

if (process.argv[2] === '--child') {
  await child(JSON.parse(process.argv[3]!));
} else {
  process.exitCode = await main().catch((err: unknown) => { console.error(err); return 1; });
}
