// Broadcast throughput, one run side by side: a BENCH_MEMBERS-recipient broadcast (100,000) from
// POST /broadcasts {send: true} to the last message taken by Postfix's smtp-sink — the fan-out
// (segment members → one queued, personalised email each, committed page by page) and end to end
// (the outbound MTA delivering them, DKIM-signed) — beside Postfix relaying the same number of
// 4 KB messages from smtp-source to the same sink; then the click-redirect route under 50
// connections (bench/tracking.ts's rounds, beside a bare node server answering the same 302).
// Targets: fan-out ≥ 10,000 recipients/s; end to end ≥ 1.0× Postfix; clicks ≥ 10,000 req/s with
// p99 < 10 ms.
//
// svc runs as it would in production: the API in this process, the jobs role (which runs the
// fan-out) and the outbound role as `bin/svc start --role …` children on the same data folder and
// Redis. The machines are shared and noisy: compare the ratios, not the absolute figures.
//
// Needs Debian's postfix package (installs it when missing; run as root). Settings (environment):
// BENCH_MEMBERS (100000; `--members N` too, `--quick` = 10,000 and one click round),
// BENCH_SESSIONS (20), BENCH_PAGE_SIZE (the shipped broadcasts_page_size), BENCH_ROUNDS (3 click
// rounds), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (1), BENCH_CONNECTIONS (50),
// BENCH_JOBS_NODE_OPTIONS (added to the jobs unit's NODE_OPTIONS, e.g. `--cpu-prof
// --cpu-prof-dir=/tmp/prof` to profile the fan-out),
// BENCH_OUTBOUND_NODE_OPTIONS, BENCH_SKIP_CLICKS=1, BENCH_SKIP_POSTFIX=1 (svc alone: fan-out and its
// delivery, for runs that compare svc with itself).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { redisKeys } from '../storage/redis/redis-keys.js';
import type { Db } from '../storage/sql/index.js';
import { startTestAppliance, type TestAppliance } from '../test/helpers/appliance.js';
import { campaignTeam, seedContacts } from '../test/helpers/broadcasts.js';
import { exited, spawnOutboundProcess } from '../test/helpers/crash-rig.js';
import { mailZone } from '../test/helpers/email-fixtures.js';
import { call } from '../test/helpers/http.js';
import { freePort } from '../test/helpers/ports.js';
import { startTestRedis } from '../test/helpers/redis.js';
import { childCpuSeconds, ensurePostfix, runPostfix, startSink, waitUntil, type PostfixFigures } from './postfix.js';
import { fmt, measureClicks } from './tracking.js';
import { jobsUnitNodeOptions } from './service-flags.js';

const QUICK = process.argv.includes('--quick');
const MEMBERS = flagInt('--members') ?? intFromEnv('BENCH_MEMBERS', QUICK ? 10_000 : 100_000);
const SESSIONS = intFromEnv('BENCH_SESSIONS', 20);
/** Fan-out and svc's delivery only: a run that compares svc with itself needs no Postfix. */
const SKIP_POSTFIX = process.env.BENCH_SKIP_POSTFIX === '1';
const CLICK_ROUNDS = intFromEnv('BENCH_ROUNDS', QUICK ? 1 : 3);
const TARGET_FAN_OUT = 10_000;
const PUBLIC_BASE = 'https://news.bench.example';
// About the 4 KB smtp-source sends, with the merge fields a newsletter has.
const TEXT = `Hello {{{FIRST_NAME}}},\n\n${'The quick brown fox jumps over the lazy dog. '.repeat(85)}\n\nUnsubscribe: {{{UNSUBSCRIBE_URL}}}\n`;

function intFromEnv(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
}

function flagInt(name: string): number | undefined {
  const at = process.argv.indexOf(name);
  if (at < 0) return undefined;
  const v = Number(process.argv[at + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} takes a positive integer`);
  return v;
}

const svcBin = join(resolve(import.meta.dirname, '../..'), 'bin', 'svc');

/** `bin/svc start --role jobs`, its log in `logFile` (info: a handful of lines per broadcast). */
function spawnJobs(settings: Record<string, string>, logFile: string): ChildProcess {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_MAIL_HOSTNAME: 'mta.svc-test.net', ...settings };
  return spawn('sh', ['-c', `exec "${svcBin}" start --role jobs >>"${logFile}"`], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

interface SvcFigures {
  fanOutSeconds: number;
  endToEndSeconds: number;
  sent: number;
  delivered: number;
  jobsCpuUs: number;
  /** Of which the main thread's (the event loop), µs a recipient. */
  jobsMainCpuUs: number;
  outboundCpuMs: number;
}

interface Rig {
  app: TestAppliance;
  children: ChildProcess[];
  stop(): Promise<void>;
}

async function startRig(sinkPort: number, dir: string): Promise<Rig & { jobsPid(): number | undefined; outboundPid(): number | undefined; token: string; segmentId: string }> {
  const redis = await startTestRedis();
  const dns = await mailZone(['inbox-one.net']);
  const app = await startTestAppliance({ redis, roles: ['api'], env: { SVC_DNS_SERVERS: dns.address, SVC_PUBLIC_BASE_URL: PUBLIC_BASE } });
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const c of children) c.kill('SIGTERM');
    for (const c of children) await exited(c);
    await app.stop();
    await dns.stop();
    await redis.stop();
  };
  try {
    const team = await campaignTeam(app, dns, 'Bench news', 'bench-news.net');
    await seedContacts(app, team.teamId, MEMBERS);
    const shared = { SVC_DATA_DIR: app.config.data_dir, SVC_REDIS_URL: redis.url, SVC_DNS_SERVERS: dns.address, SVC_PUBLIC_BASE_URL: PUBLIC_BASE };
    const outbound = spawnOutboundProcess({
      ...shared, SVC_OUTBOUND_PORT: String(sinkPort), SVC_LOG_LEVEL: 'warn',
      SVC_REGIONS: JSON.stringify({ 'us-east-1': { concurrency: SESSIONS, per_domain_connections: SESSIONS } }),
      ...(process.env.BENCH_OUTBOUND_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_OUTBOUND_NODE_OPTIONS } : {}),
    });
    children.push(outbound);
    // The in-process API's enqueue wakes only its own process's worker; a 100 ms poll stands in
    // for that wake in the separate jobs process (the default all-roles process wakes at once).
    const jobsLog = join(dir, 'jobs.log');
    const jobs = spawnJobs({
      ...shared, SVC_LOG_LEVEL: 'info', SVC_WORK_POLL_MS: '100',
      ...(process.env.BENCH_PAGE_SIZE ? { SVC_BROADCASTS_PAGE_SIZE: process.env.BENCH_PAGE_SIZE } : {}),
      // As the installed unit runs it (its heap settings), then the bench's own (a profile).
      NODE_OPTIONS: jobsUnitNodeOptions(process.env.BENCH_JOBS_NODE_OPTIONS),
    }, jobsLog);
    children.push(jobs);
    const redisClient = app.appliance.services.redis;
    const ready = await waitUntil(async () => {
      const subscribed = (await redisClient.pubsub('NUMSUB', redisKeys.outboundWake('us-east-1'))) as [string, number];
      let jobsUp = false;
      try { jobsUp = readFileSync(jobsLog, 'utf8').includes('svc started'); } catch { /* not written yet */ }
      return Number(subscribed[1]) > 0 && jobsUp;
    }, 60_000);
    if (!ready) throw new Error('the jobs and outbound children did not start within 60 s');
    return { app, children, stop, token: team.token, segmentId: team.segmentId, jobsPid: () => jobs.pid, outboundPid: () => outbound.pid };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Members the fan-out has done so far (sent or excluded), and whether the broadcast is `sent` (every page committed). */
async function fanOutProgress(db: Db, broadcastId: string): Promise<{ done: number; sent: number; finished: boolean }> {
  const row = await db.selectFrom('broadcasts').select(['status', 'recipients_sent', 'recipients_excluded']).where('id', '=', broadcastId).executeTakeFirst();
  const sent = Number(row?.recipients_sent ?? 0);
  return { done: sent + Number(row?.recipients_excluded ?? 0), sent, finished: row?.status === 'sent' };
}

async function deliveredCount(db: Db): Promise<number> {
  const row = await db.selectFrom('email_recipients').select((eb) => eb.fn.countAll().as('n')).where('state', '=', 'delivered').executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Polls until `reached`; gives up after 60 s without `progress` moving (the caller reports what it got). */
async function untilReached<T>(read: () => Promise<T>, progress: (v: T) => number, reached: (v: T) => boolean, everyMs: number): Promise<T> {
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const v = await read();
    if (reached(v)) return v;
    if (progress(v) !== last) { last = progress(v); lastChange = Date.now(); }
    if (Date.now() - lastChange > 60_000) return v;
    await sleep(everyMs);
  }
}

async function runSvc(sinkPort: number, dir: string): Promise<SvcFigures> {
  const rig = await startRig(sinkPort, dir);
  try {
    const db = rig.app.appliance.services.database.db;
    const cpu = { jobs: childCpuSeconds(rig.jobsPid()), jobsMain: childCpuSeconds(rig.jobsPid(), true), outbound: childCpuSeconds(rig.outboundPid()) };
    const started = performance.now();
    const created = await call(rig.app.baseUrl, 'POST', '/broadcasts', {
      token: rig.token,
      body: { name: 'Bench', segment_id: rig.segmentId, from: 'News <news@bench-news.net>', subject: 'News for {{{FIRST_NAME}}}', text: TEXT, send: true },
    });
    if (created.status !== 201) throw new Error(`POST /broadcasts: ${JSON.stringify(created.body)}`);
    const id = created.body.id as string;
    // The fan-out is done when the broadcast is `sent`: every page committed with its cursor.
    const fanOut = await untilReached(() => fanOutProgress(db, id), (p) => p.done, (p) => p.finished, 20);
    const fanOutSeconds = (performance.now() - started) / 1000;
    const jobsCpu = childCpuSeconds(rig.jobsPid()) - cpu.jobs;
    const jobsMainCpu = childCpuSeconds(rig.jobsPid(), true) - cpu.jobsMain;
    if (!fanOut.finished) throw new Error(`the fan-out stalled for 60 s at ${fanOut.done} of ${MEMBERS} members`);
    const sent = fanOut.sent;
    const delivered = await untilReached(() => deliveredCount(db), (n) => n, (n) => n >= sent, 100);
    const endToEndSeconds = (performance.now() - started) / 1000;
    if (delivered < sent) {
      const states = await db.selectFrom('email_recipients').select(['state', (eb) => eb.fn.countAll().as('n')]).groupBy('state').execute();
      console.log(`svc stalled at ${delivered}/${sent} delivered: ${JSON.stringify(states)}`);
    }
    const outboundCpu = childCpuSeconds(rig.outboundPid()) - cpu.outbound;
    return {
      fanOutSeconds, endToEndSeconds, sent, delivered,
      jobsCpuUs: (jobsCpu * 1e6) / Math.max(sent, 1), jobsMainCpuUs: (jobsMainCpu * 1e6) / Math.max(sent, 1), outboundCpuMs: (outboundCpu * 1000) / Math.max(delivered, 1),
    };
  } finally {
    await rig.stop();
  }
}

function printSending(svc: SvcFigures, postfix: PostfixFigures | undefined): void {
  const fanOut = svc.sent / svc.fanOutSeconds;
  const e2e = svc.delivered / svc.endToEndSeconds;
  console.log('\n| relay | msg/s accepted → delivered at the sink | seconds |\n| --- | --- | --- |');
  if (postfix) console.log(`| Postfix (smtp-source → postfix → smtp-sink) | ${postfix.endToEndPerSec.toFixed(0)} | ${postfix.seconds.toFixed(1)} |`);
  console.log(`| svc (POST /broadcasts → fan-out → svc outbound → smtp-sink) | ${e2e.toFixed(0)} | ${svc.endToEndSeconds.toFixed(1)} |`);
  console.log(`\nfan-out: ${svc.sent} recipients in ${svc.fanOutSeconds.toFixed(1)} s = ${fanOut.toFixed(0)} recipients/s (target ≥ ${TARGET_FAN_OUT}: ${fanOut >= TARGET_FAN_OUT ? 'met' : 'NOT MET'}); jobs process CPU ${svc.jobsCpuUs.toFixed(0)} µs a recipient (main thread ${svc.jobsMainCpuUs.toFixed(0)})`);
  if (!postfix) {
    console.log(`end to end: ${svc.delivered} of ${svc.sent} delivered, ${e2e.toFixed(0)} msg/s (Postfix not run: BENCH_SKIP_POSTFIX); outbound process CPU ${svc.outboundCpuMs.toFixed(2)} ms a message`);
    return;
  }
  const ratio = e2e / postfix.endToEndPerSec;
  console.log(`end to end: ${svc.delivered} of ${svc.sent} delivered, ${e2e.toFixed(0)} msg/s; svc / Postfix ${ratio.toFixed(2)}× (target ≥ 1.0×: ${ratio >= 1 ? 'met' : 'NOT MET'}); outbound process CPU ${svc.outboundCpuMs.toFixed(2)} ms a message (with its signing threads)`);
}

async function main(): Promise<number> {
  // Postfix's smtp-sink is the MX of both sides: installed even when Postfix's relay is not run.
  ensurePostfix();
  const dir = mkdtempSync(join(tmpdir(), 'svc-broadcast-bench-'));
  // postfix's own daemons (user postfix) must reach their queue inside it.
  chmodSync(dir, 0o755);
  const sinkPort = await freePort();
  const sink = startSink(sinkPort);
  let ok = true;
  try {
    await sleep(300);
    console.log(`broadcast: ${MEMBERS} recipients, ${SESSIONS} sessions, DKIM on (svc), sink: smtp-sink on 127.0.0.1:${sinkPort}, node ${process.version}`);
    const postfix = SKIP_POSTFIX ? undefined : await runPostfix(sinkPort, join(dir, 'postfix'), { messages: MEMBERS, sessions: SESSIONS });
    const svc = await runSvc(sinkPort, dir);
    printSending(svc, postfix);
    if (svc.delivered < svc.sent) ok = false;
  } finally {
    sink.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.env.BENCH_SKIP_CLICKS === '1') return ok ? 0 : 1;
  const seconds = intFromEnv('BENCH_SECONDS', 5);
  const connections = intFromEnv('BENCH_CONNECTIONS', 50);
  console.log(`\nclick redirects: GET /t/c/<token>, ${connections} connections, ${CLICK_ROUNDS} rounds of ${seconds} s`);
  const clicks = await measureClicks({ rounds: CLICK_ROUNDS, seconds, warmupSeconds: intFromEnv('BENCH_WARMUP_SECONDS', 1), connections, log: (line) => console.log(line) });
  for (const [name, m] of clicks.medians) console.log(`median ${name.padEnd(8)} ${fmt(m)}${name === 'bare' ? '' : `  ${clicks.verdict(m)}`}`);
  return ok && clicks.ok ? 0 : 1;
}

process.exitCode = await main().catch((err: unknown) => { console.error(err); return 1; });
