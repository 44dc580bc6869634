// The fault soak: a real `bin/svc start` (every role) takes a steady load of API sends (each with
// an Idempotency-Key) and delivers them to a fake MX on loopback, while faults are injected one
// after the other: kill -9 of svc (restarted each time), SIGTERM (restarted), Redis killed and
// restarted empty, Redis FLUSHALL. At the end the queue drains and every accepted email (a 200)
// is looked for at the MX by Message-ID. It prints one row per fault and exits by itself.
//
//   fault          the fault injected
//   injections     how many times
//   accepted       sends answered 200 while that fault's phase ran
//   delivered      of those, taken by the MX (at least once)
//   ambiguous      of those, cut off after the data went out (never resent; the spec's
//                  ambiguous_submission after two hours unless a report names them)
//   lost           accepted, but neither delivered nor ambiguous nor failed with a reason
//   duplicated     of those, taken by the MX more than once
//   max recovery   the longest outage clients saw after one injection: the longest stretch
//                  without a send answered 200, until sends made after the fault succeed
//
// Settings (environment): FAULTS_KILLS (20), FAULTS_SIGTERMS (3), FAULTS_REDIS_KILLS (3),
// FAULTS_FLUSHES (3), FAULTS_WORKERS (4). Exit code 1 when anything was lost or duplicated.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { startFakeMx } from '../test/helpers/fake-mx.js';
import { startFaultRedis, type FaultRedis } from '../test/helpers/faults-redis.js';
import { startLoad, summarise, type Load } from '../test/helpers/faults-load.js';
import { spawnSvc, type SvcProcess } from '../test/helpers/faults-svc.js';
import { freePort } from '../test/helpers/ports.js';
import { verifyDomainThroughApi } from '../test/helpers/sending.js';
import { mailZone } from '../test/emails/support.js';

const KILLS = intFromEnv('FAULTS_KILLS', 20);
const SIGTERMS = intFromEnv('FAULTS_SIGTERMS', 3);
const REDIS_KILLS = intFromEnv('FAULTS_REDIS_KILLS', 3);
const FLUSHES = intFromEnv('FAULTS_FLUSHES', 3);
const WORKERS = intFromEnv('FAULTS_WORKERS', 4);

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number.parseInt(raw, 10);
}

interface Phase {
  fault: string;
  injections: number;
  /** Idempotency-Keys accepted while the phase ran. */
  keys: string[];
  recoveries: number[];
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-faults-bench-'));
const redis = await startFaultRedis();
const dns = await mailZone(['inbox-one.net']);
const mx = await startFakeMx({ keepRaw: false, replyDelayMs: 20 });
const ports = { httpPort: await freePort(), smtpPort: await freePort() };
const env = {
  SVC_REDIS_URL: redis.url, SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port),
  SVC_OUTBOUND_POLL_S: '2', SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000', SVC_LOG_LEVEL: 'warn',
  SVC_DOMAINS_RECHECK_CRON: '0 0 1 1 *',
};
let svc = await start();
const startedAt = Date.now();

async function start(): Promise<SvcProcess> {
  const next = await spawnSvc({ dataDir, env, ...ports });
  await next.ready();
  return next;
}

try {
  const team = await svc.newTeam('Soak');
  await verifyDomainThroughApi(svc.baseUrl, team.token, dns, 'soak-sender.net');
  const load = startLoad({
    baseUrl: svc.baseUrl, token: team.token, workers: WORKERS, hangMs: 15_000, sendsOnly: true, pauseMs: 5,
    sendBody: (n) => ({ from: 'Soak <s@soak-sender.net>', to: `r${n}@inbox-one.net`, subject: `Soak ${n}`, text: `Message ${n}` }),
  });
  const phases: Phase[] = [];
  await runPhase(phases, load, 'svc kill -9', KILLS, async () => {
    svc.proc.kill('SIGKILL');
    await svc.exited;
    svc = await start();
  });
  await runPhase(phases, load, 'svc SIGTERM', SIGTERMS, async () => {
    svc.proc.kill('SIGTERM');
    const exit = await svc.exited;
    if (exit.code !== 0) console.error(`SIGTERM: exit ${exit.code} ${exit.signal ?? ''}`);
    svc = await start();
  });
  await runPhase(phases, load, 'redis kill -9', REDIS_KILLS, async () => {
    await redis.kill();
    await sleep(2000);
    await redis.restart();
  });
  await runPhase(phases, load, 'redis FLUSHALL', FLUSHES, async () => { await redis.command('FLUSHALL'); });
  await load.stop();
  const drained = await drain(180_000);
  svc.proc.kill('SIGTERM');
  await svc.exited;
  const bad = report(phases, load, drained);
  process.exitCode = bad ? 1 : 0;
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  svc.proc.kill('SIGKILL');
  await redis.stop();
  await mx.stop();
  await dns.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

/** Injects one fault `count` times, 1-3 s of load apart, timing each recovery. */
async function runPhase(phases: Phase[], load: Load, fault: string, count: number, inject: () => Promise<void>): Promise<void> {
  const before = new Set(load.accepted.keys());
  const phase: Phase = { fault, injections: 0, keys: [], recoveries: [] };
  for (let i = 0; i < count; i++) {
    await sleep(1000 + Math.random() * 2000);
    const at = performance.now();
    await inject();
    phase.injections++;
    phase.recoveries.push(await recoveredAfter(load, at, performance.now()));
    process.stderr.write(`${fault} ${i + 1}/${count}: recovered in ${phase.recoveries.at(-1)} ms\n`);
  }
  await sleep(1000);
  phase.keys = [...load.accepted.keys()].filter((k) => !before.has(k));
  phases.push(phase);
}

/**
 * The outage one injection caused, as clients saw it: the longest stretch from `at` on without a
 * send answered 200, up to the first 200 for a send made after the fault was over (`over`).
 */
async function recoveredAfter(load: Load, at: number, over: number): Promise<number> {
  const okTimes = () => load.records.filter((r) => r.kind === 'send' && r.status === 200).map((r) => ({ start: load.startedAt + r.at, end: load.startedAt + r.at + r.ms }));
  for (let waited = 0; waited < 60_000; waited += 50) {
    const done = okTimes().filter((o) => o.start >= over).sort((a, b) => a.end - b.end)[0];
    if (done) {
      const ends = okTimes().map((o) => o.end).filter((e) => e >= at && e <= done.end).sort((a, b) => a - b);
      let longest = 0;
      let previous = at;
      for (const end of ends) { longest = Math.max(longest, end - previous); previous = end; }
      return Math.round(longest);
    }
    await sleep(50);
  }
  return Number.NaN;
}

interface Final { messageIds: Map<string, string>; states: Map<string, string>; seconds: number }

/** Waits until nothing is queued or being submitted; answers each email's Message-ID and state. */
async function drain(timeoutMs: number): Promise<Final> {
  const started = performance.now();
  const db = new BetterSqlite3(join(dataDir, 'svc.sqlite'), { readonly: true });
  try {
    for (;;) {
      const open = db.prepare("select count(*) as n from email_recipients where state in ('queued', 'submitting', 'scheduled')").get() as { n: number };
      if (open.n === 0 || performance.now() - started > timeoutMs) break;
      await sleep(250);
    }
    const rows = db.prepare('select e.id, e.message_id, r.state from emails e join email_recipients r on r.email_id = e.id').all() as { id: string; message_id: string; state: string }[];
    return {
      messageIds: new Map(rows.map((r) => [r.id, r.message_id])),
      states: new Map(rows.map((r) => [r.id, r.state])),
      seconds: Math.round((performance.now() - started) / 1000),
    };
  } finally {
    db.close();
  }
}

function report(phases: Phase[], load: Load, final: Final): boolean {
  const atMx = mx.accepted();
  const header = ['fault', 'injections', 'accepted', 'delivered', 'ambiguous', 'lost', 'duplicated', 'max recovery'];
  const rows: string[][] = [];
  let bad = false;
  const totals = { injections: 0, accepted: 0, delivered: 0, ambiguous: 0, lost: 0, duplicated: 0 };
  for (const p of phases) {
    const ids = p.keys.map((k) => load.accepted.get(k)!);
    let delivered = 0;
    let ambiguous = 0;
    let lost = 0;
    let duplicated = 0;
    for (const id of ids) {
      const messageId = final.messageIds.get(id);
      const times = messageId ? atMx.get(messageId) ?? 0 : 0;
      const state = final.states.get(id);
      if (times > 0) delivered++;
      else if (state === 'ambiguous' || state === 'failed' || state === 'bounced') ambiguous++;
      else lost++;
      if (times > 1) duplicated++;
    }
    bad ||= lost > 0 || duplicated > 0;
    const maxRecovery = Math.max(...p.recoveries);
    rows.push([p.fault, String(p.injections), String(ids.length), String(delivered), String(ambiguous), String(lost), String(duplicated), `${(maxRecovery / 1000).toFixed(1)} s`]);
    totals.injections += p.injections; totals.accepted += ids.length; totals.delivered += delivered;
    totals.ambiguous += ambiguous; totals.lost += lost; totals.duplicated += duplicated;
  }
  rows.push(['total', ...Object.values(totals).map(String), '']);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
  const hung = load.records.filter((r) => r.hung).length;
  const refused = load.records.filter((r) => r.kind === 'send' && r.status !== 200).length;
  console.log(`sends: ${load.records.length} made, ${load.accepted.size} accepted, ${refused} not accepted, ${hung} hung (${summarise(load.records)}; "no answer" is a refused connection while svc was down)`);
  console.log(`queue drained ${final.seconds} s after the load stopped; whole soak ${Math.round((Date.now() - startedAt) / 1000)} s`);
  console.log(bad ? 'RESULT: something accepted was lost or delivered twice' : 'RESULT: nothing accepted was lost or delivered twice');
  return bad;
}
