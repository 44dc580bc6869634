// The fault soak: a real `bin/svc start` (every role) takes a steady mixed load while faults are
// injected one after the other: kill -9 of svc (restarted each time), SIGTERM (restarted), Redis
// killed and restarted empty, Redis FLUSHALL. The load, all the time: API sends (POST /emails, each
// with an Idempotency-Key), batch sends (POST /emails/batch, keyed), inbound SMTP messages to a
// receiving domain of the team, and the webhook deliveries all that causes (an endpoint on a
// loopback receiver subscribed to the email events). At the end the queues drain and:
//   - every accepted email (a 200, single or batch) is looked for at the fake MX by Message-ID;
//   - every inbound message answered 250 is looked for in the receiving API;
//   - every subscribed event in the outbox must have reached the receiver at least once, and
//     repeats only under the same `wh-id`.
// It prints one row per fault and load and exits by itself.
//
//   fault          the fault injected
//   load           api send | batch send | inbound smtp | webhooks
//   injections     how many times
//   accepted       taken while that fault's phase ran: emails answered 200, messages answered
//                  250, events written to the outbox for the endpoint
//   delivered      of those: taken by the MX (at least once) / present in the receiving API /
//                  received by the endpoint (at least once)
//   ambiguous      emails cut off after the data went out (never resent; the spec's
//                  ambiguous_submission after two hours unless a report names them)
//   lost           accepted, but none of the above (nor failed with a reason)
//   duplicated     emails taken by the MX more than once / inbound messages stored twice / events
//                  received more than once (allowed only under one `wh-id`: `bad` counts the others)
//   max recovery   the longest outage clients saw after one injection: the longest stretch
//                  without a send answered 200, until sends made after the fault succeed
//
// Settings (environment): FAULTS_KILLS (20), FAULTS_SIGTERMS (3), FAULTS_REDIS_KILLS (3),
// FAULTS_FLUSHES (3), FAULTS_WORKERS (4 API senders), FAULTS_BATCH_WORKERS (1),
// FAULTS_BATCH_SIZE (5), FAULTS_INBOUND_WORKERS (2). Exit code 1 when anything was lost or
// duplicated (webhook repeats under one `wh-id` are allowed).
//
// Then a separate svc runs under strace (test/helpers/fsync-probe.ts) for FAULTS_FSYNC_N (200)
// sends and as many inbound messages: "fsync before reply" counts the 200s and 250s checked and
// those not preceded by an fsync of what they promise (must be 0), and the same run under
// eatmydata (fsync a no-op) must flag every reply. Skipped, with the reason, without strace.
//
// `--json <file>`: the outcome is also written to <file> as data (SoakOutcome), the printed
// output unchanged; test/faults/soak.test.ts asserts on that.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { startFakeMx } from '../test/helpers/fake-mx.js';
import { startFaultRedis, type FaultRedis } from '../test/helpers/faults-redis.js';
import { receivingDomainThroughApi, startBatchLoad, startInboundLoad, startLoad, summarise, webhookEndpoint, type Load, type SideLoad } from '../test/helpers/faults-load.js';
import { spawnSvc, type SvcProcess } from '../test/helpers/faults-svc.js';
import { freePort } from '../test/helpers/ports.js';
import { verifyDomainThroughApi } from '../test/helpers/sending.js';
import { startWebhookReceiver, type WebhookReceiver } from '../test/helpers/webhook-receiver.js';
import { mailZone } from '../test/helpers/email-fixtures.js';
import { probeUnavailable, runFsyncProbe } from '../test/helpers/fsync-probe.js';

const KILLS = intFromEnv('FAULTS_KILLS', 20);
const SIGTERMS = intFromEnv('FAULTS_SIGTERMS', 3);
const REDIS_KILLS = intFromEnv('FAULTS_REDIS_KILLS', 3);
const FLUSHES = intFromEnv('FAULTS_FLUSHES', 3);
const WORKERS = intFromEnv('FAULTS_WORKERS', 4);
const BATCH_WORKERS = intFromEnv('FAULTS_BATCH_WORKERS', 1);
const BATCH_SIZE = intFromEnv('FAULTS_BATCH_SIZE', 5);
const INBOUND_WORKERS = intFromEnv('FAULTS_INBOUND_WORKERS', 2);
const FSYNC_N = intFromEnv('FAULTS_FSYNC_N', 200);
/** The email events the soak's webhook endpoint subscribes to. */
const HOOK_EVENTS = ['email.sent', 'email.delivered', 'email.delivery_delayed', 'email.bounced', 'email.failed', 'email.received'];

/** Where `--json <file>` asks for the outcome as data; undefined without the flag. */
const jsonFile = ((args: string[]) => {
  const at = args.indexOf('--json');
  if (at < 0) return undefined;
  if (!args[at + 1]) throw new Error('--json needs a file name');
  return args[at + 1];
})(process.argv.slice(2));

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number.parseInt(raw, 10);
}

interface Phase {
  fault: string;
  injections: number;
  /** Idempotency-Keys accepted while the phase ran. */
  keys: string[];
  /** Batch keys and inbound message numbers accepted while the phase ran. */
  batchKeys: string[];
  inboundKeys: string[];
  /** Wall-clock window of the phase (events written in it belong to it). */
  from: number;
  to: number;
  recoveries: number[];
}

/** What `--json` writes: the table's rows and the figures printed under it, as data. */
export interface SoakOutcome {
  /** One row per fault and load, then one `total` row per load (the printed table). */
  rows: Row[];
  /** Something accepted was lost or delivered twice (webhook repeats under one wh-id aside). */
  bad: boolean;
  api: { made: number; accepted: number; refused: number; hung: number };
  batch: { made: number; accepted: number };
  inbound: { offered: number; accepted: number };
  webhooks: { requests: number; bad: number };
  /** Recipients still queued, submitting or scheduled when the drain stopped waiting (0: drained). */
  undrained: number;
  drainSeconds: number;
  soakSeconds: number;
  /** The strace probe; `skipped` names why it did not run. */
  fsync: { skipped?: string; bad: boolean; checked: number; violations: number; flaggedWithoutFsync: number; repliesWithoutFsync: number };
  /** The message of an error that ended the soak early. */
  error?: string;
}

/** The side loads of the mixed load and the webhook receiver. */
interface Mixed {
  batch: SideLoad;
  inbound: SideLoad;
  receiver: WebhookReceiver;
  token: string;
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-faults-bench-'));
const redis = await startFaultRedis();
const dns = await mailZone(['inbox-one.net']);
const mx = await startFakeMx({ keepRaw: false, replyDelayMs: 20 });
const ports = { httpPort: await freePort(), smtpPort: await freePort() };
const env = {
  SVC_REDIS_URL: redis.url, SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port),
  SVC_OUTBOUND_POLL_S: '2', SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000', SVC_LOG_LEVEL: 'warn',
  SVC_DOMAINS_RECHECK_CRON: '0 0 1 1 *', SVC_WEBHOOKS_ALLOW_PRIVATE: 'true', SVC_WEBHOOKS_TIMEOUT_MS: '5000',
  SVC_MAIL_HOSTNAME: 'mx.soak-svc.net',
};
const receiver = await startWebhookReceiver();
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
  await receivingDomainThroughApi(svc.baseUrl, team.token, dns, 'soak-inbox.net');
  await webhookEndpoint(svc.baseUrl, team.token, `${receiver.url}/soak`, HOOK_EVENTS);
  const load = startLoad({
    baseUrl: svc.baseUrl, token: team.token, workers: WORKERS, hangMs: 15_000, sendsOnly: true, pauseMs: 5,
    sendBody: (n) => ({ from: 'Soak <s@soak-sender.net>', to: `r${n}@inbox-one.net`, subject: `Soak ${n}`, text: `Message ${n}` }),
  });
  const mixed = startMixed(team.token);
  const phases: Phase[] = [];
  await runPhase(phases, load, mixed, 'svc kill -9', KILLS, async () => {
    svc.proc.kill('SIGKILL');
    await svc.exited;
    svc = await start();
  });
  await runPhase(phases, load, mixed, 'svc SIGTERM', SIGTERMS, async () => {
    svc.proc.kill('SIGTERM');
    const exit = await svc.exited;
    if (exit.code !== 0) console.error(`SIGTERM: exit ${exit.code} ${exit.signal ?? ''}`);
    svc = await start();
  });
  await runPhase(phases, load, mixed, 'redis kill -9', REDIS_KILLS, async () => {
    await redis.kill();
    await sleep(2000);
    await redis.restart();
  });
  await runPhase(phases, load, mixed, 'redis FLUSHALL', FLUSHES, async () => { await redis.command('FLUSHALL'); });
  await Promise.all([load.stop(), mixed.batch.stop(), mixed.inbound.stop()]);
  claimLeftovers(phases, load, mixed);
  const drained = await drain(180_000);
  const hooks = await webhookOutcome(phases, mixed, load, 120_000);
  const inbound = await inboundOutcome(phases, mixed);
  svc.proc.kill('SIGTERM');
  await svc.exited;
  const outcome = report(phases, load, mixed, drained, inbound, hooks);
  const fsync = await fsyncBeforeReply();
  process.exitCode = outcome.bad || fsync.bad ? 1 : 0;
  if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ ...outcome, fsync }, null, 2));
} catch (err) {
  console.error(err);
  process.exitCode = 1;
  if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ error: String((err as Error)?.stack ?? err) }, null, 2));
} finally {
  svc.proc.kill('SIGKILL');
  await redis.stop();
  await mx.stop();
  await receiver.stop();
  await dns.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

/** Injects one fault `count` times, 1-3 s of load apart, timing each recovery. */
async function runPhase(phases: Phase[], load: Load, mixed: Mixed, fault: string, count: number, inject: () => Promise<void>): Promise<void> {
  // The first phase also owns what was accepted before its first injection.
  const first = phases.length === 0;
  const before = new Set(first ? [] : load.accepted.keys());
  const batchBefore = new Set(first ? [] : mixed.batch.accepted.keys());
  const inboundBefore = new Set(first ? [] : mixed.inbound.accepted.keys());
  const phase: Phase = { fault, injections: 0, keys: [], batchKeys: [], inboundKeys: [], from: phases.at(-1)?.to ?? 0, to: 0, recoveries: [] };
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
  phase.batchKeys = [...mixed.batch.accepted.keys()].filter((k) => !batchBefore.has(k));
  phase.inboundKeys = [...mixed.inbound.accepted.keys()].filter((k) => !inboundBefore.has(k));
  phase.to = Date.now();
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

interface Final { messageIds: Map<string, string>; states: Map<string, string>; seconds: number; open: number }

/** Waits until nothing is queued or being submitted; answers each email's Message-ID and state. */
async function drain(timeoutMs: number): Promise<Final> {
  const started = performance.now();
  const db = new BetterSqlite3(join(dataDir, 'svc.sqlite'), { readonly: true });
  try {
    let open: { n: number };
    for (;;) {
      open = db.prepare("select count(*) as n from email_recipients where state in ('queued', 'submitting', 'scheduled')").get() as { n: number };
      if (open.n === 0 || performance.now() - started > timeoutMs) break;
      await sleep(250);
    }
    const rows = db.prepare('select e.id, e.message_id, r.state from emails e join email_recipients r on r.email_id = e.id').all() as { id: string; message_id: string; state: string }[];
    return {
      messageIds: new Map(rows.map((r) => [r.id, r.message_id])),
      states: new Map(rows.map((r) => [r.id, r.state])),
      seconds: Math.round((performance.now() - started) / 1000),
      open: open.n,
    };
  } finally {
    db.close();
  }
}

export interface Row { fault: string; load: string; injections: number; accepted: number; delivered: number; ambiguous: number; lost: number; duplicated: number; bad?: number; recovery?: string }

/** Emails (single or batch) by where they ended: at the MX, ambiguous/failed with a reason, or lost. */
function emailRow(fault: string, load: string, injections: number, ids: string[], final: Final): Row {
  const atMx = mx.accepted();
  const row: Row = { fault, load, injections, accepted: ids.length, delivered: 0, ambiguous: 0, lost: 0, duplicated: 0 };
  for (const id of ids) {
    const messageId = final.messageIds.get(id);
    const times = messageId ? atMx.get(messageId) ?? 0 : 0;
    const state = final.states.get(id);
    if (times > 0) row.delivered++;
    else if (state === 'ambiguous' || state === 'failed' || state === 'bounced') row.ambiguous++;
    else row.lost++;
    if (times > 1) row.duplicated++;
  }
  return row;
}

function report(phases: Phase[], load: Load, mixed: Mixed, final: Final, inbound: Map<string, Row>, hooks: Map<string, Row>): Omit<SoakOutcome, 'fsync'> {
  const rows: Row[] = [];
  for (const p of phases) {
    const maxRecovery = `${(Math.max(...p.recoveries) / 1000).toFixed(1)} s`;
    rows.push({ ...emailRow(p.fault, 'api send', p.injections, p.keys.map((k) => load.accepted.get(k)!), final), recovery: maxRecovery });
    rows.push(emailRow(p.fault, 'batch send', p.injections, p.batchKeys.flatMap((k) => mixed.batch.accepted.get(k)!), final));
    rows.push(inbound.get(p.fault)!);
    rows.push(hooks.get(p.fault)!);
  }
  const total = (load: string): Row => {
    const of = rows.filter((r) => r.load === load);
    const sum = (k: 'accepted' | 'delivered' | 'ambiguous' | 'lost' | 'duplicated' | 'bad') => of.reduce((n, r) => n + (r[k] ?? 0), 0);
    return { fault: 'total', load, injections: phases.reduce((n, p) => n + p.injections, 0), accepted: sum('accepted'), delivered: sum('delivered'), ambiguous: sum('ambiguous'), lost: sum('lost'), duplicated: sum('duplicated'), bad: load === 'webhooks' ? sum('bad') : undefined };
  };
  const totals = ['api send', 'batch send', 'inbound smtp', 'webhooks'].map(total);
  const bad = [...rows].some((r) => r.lost > 0 || (r.load === 'webhooks' ? (r.bad ?? 0) > 0 : r.duplicated > 0));
  printTable([...rows, ...totals]);
  const hung = load.records.filter((r) => r.hung).length;
  const refused = load.records.filter((r) => r.kind === 'send' && r.status !== 200).length;
  console.log(`api sends: ${load.records.length} made, ${load.accepted.size} accepted, ${refused} not accepted, ${hung} hung (${summarise(load.records)}; "no answer" is a refused connection while svc was down)`);
  console.log(`batch sends: ${mixed.batch.records.length} made, ${mixed.batch.accepted.size} accepted (${statusCounts(mixed.batch.records)})`);
  console.log(`inbound: ${mixed.inbound.records.length} messages offered, ${mixed.inbound.accepted.size} answered 250 (${statusCounts(mixed.inbound.records)}; 0 is a refused or cut connection)`);
  console.log(`webhooks: ${mixed.receiver.requests.length} requests received; "bad" = an event received under two different wh-ids: ${totals[3]!.bad}`);
  console.log(`queue drained ${final.seconds} s after the load stopped; whole soak ${Math.round((Date.now() - startedAt) / 1000)} s`);
  console.log(bad ? 'RESULT: something accepted was lost or delivered twice' : 'RESULT: nothing accepted was lost or delivered twice');
  return {
    rows: [...rows, ...totals], bad,
    api: { made: load.records.length, accepted: load.accepted.size, refused, hung },
    batch: { made: mixed.batch.records.length, accepted: mixed.batch.accepted.size },
    inbound: { offered: mixed.inbound.records.length, accepted: mixed.inbound.accepted.size },
    webhooks: { requests: mixed.receiver.requests.length, bad: totals[3]!.bad ?? 0 },
    undrained: final.open, drainSeconds: final.seconds, soakSeconds: Math.round((Date.now() - startedAt) / 1000),
  };
}

function printTable(rows: Row[]): void {
  const header = ['fault', 'load', 'injections', 'accepted', 'delivered', 'ambiguous', 'lost', 'duplicated', 'max recovery'];
  const cells = rows.map((r) => [r.fault, r.load, String(r.injections), String(r.accepted), String(r.delivered), String(r.ambiguous), String(r.lost),
    r.bad !== undefined ? `${r.duplicated} (bad ${r.bad})` : String(r.duplicated), r.recovery ?? '']);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => (i < 2 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}

function statusCounts(records: readonly { status: number }[]): string {
  const counts = new Map<number, number>();
  for (const r of records) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}: ${v}`).join(', ');
}

/** Requests still in flight when the last phase closed were answered while it ran: they are its. */
function claimLeftovers(phases: Phase[], load: Load, mixed: Mixed): void {
  const last = phases.at(-1)!;
  const taken = (pick: (p: Phase) => string[]) => new Set(phases.flatMap(pick));
  const api = taken((p) => p.keys);
  const batch = taken((p) => p.batchKeys);
  const inbound = taken((p) => p.inboundKeys);
  last.keys.push(...[...load.accepted.keys()].filter((k) => !api.has(k)));
  last.batchKeys.push(...[...mixed.batch.accepted.keys()].filter((k) => !batch.has(k)));
  last.inboundKeys.push(...[...mixed.inbound.accepted.keys()].filter((k) => !inbound.has(k)));
}

/** Starts the batch and inbound side loads (same ports across restarts). */
function startMixed(token: string): Mixed {
  const batch = startBatchLoad({
    baseUrl: `http://127.0.0.1:${ports.httpPort}`, token, workers: BATCH_WORKERS, size: BATCH_SIZE, hangMs: 15_000,
    body: (n, i) => ({ from: 'Soak <s@soak-sender.net>', to: `b${n}-${i}@inbox-one.net`, subject: `Batch ${n}/${i}`, text: `Batch message ${n}/${i}` }),
  });
  const inbound = startInboundLoad({ host: '127.0.0.1', port: ports.smtpPort, workers: INBOUND_WORKERS, from: 'far@sender.example', to: 'desk@soak-inbox.net', hangMs: 15_000 });
  return { batch, inbound, receiver, token };
}

/** The phase an instant belongs to (after the last phase: the last one, the drain). */
function phaseAt(phases: Phase[], at: number): Phase {
  return phases.find((p) => at >= p.from && at < p.to) ?? phases.at(-1)!;
}

/**
 * Every 250'd inbound message looked up in the receiving API; `duplicated` counts the soak's
 * Message-IDs stored more than once.
 */
async function inboundOutcome(phases: Phase[], mixed: Mixed): Promise<Map<string, Row>> {
  const rows = new Map<string, Row>(phases.map((p) => [p.fault, { fault: p.fault, load: 'inbound smtp', injections: p.injections, accepted: 0, delivered: 0, ambiguous: 0, lost: 0, duplicated: 0 }]));
  const db = new BetterSqlite3(join(dataDir, 'svc.sqlite'), { readonly: true });
  const stored = new Map<string, number>();
  try {
    for (const r of db.prepare("select message_id from received_emails where message_id like '%@soak.example%'").all() as { message_id: string }[]) stored.set(r.message_id, (stored.get(r.message_id) ?? 0) + 1);
  } finally {
    db.close();
  }
  for (const p of phases) {
    const row = rows.get(p.fault)!;
    for (const key of p.inboundKeys) {
      const id = mixed.inbound.accepted.get(key)![0]!;
      row.accepted++;
      const got = await fetch(`http://127.0.0.1:${ports.httpPort}/emails/receiving/${id}`, { headers: { authorization: `Bearer ${mixed.token}` } });
      const body = (await got.json()) as { id?: string; headers?: Record<string, string> };
      if (got.status === 200 && body.id === id) row.delivered++;
      else row.lost++;
    }
    const prefixes = new Set(p.inboundKeys.map((k) => `inbound-${k}-`));
    row.duplicated = [...stored].filter(([m, n]) => n > 1 && prefixes.has(/^<?(inbound-\d+-)/.exec(m)?.[1] ?? '')).length;
  }
  return rows;
}

/**
 * Waits (up to `timeoutMs`) until every subscribed outbox event reached the receiver, then counts
 * per phase: events, received at least once, received more than once, and under more than one wh-id.
 */
async function webhookOutcome(phases: Phase[], mixed: Mixed, load: Load, timeoutMs: number): Promise<Map<string, Row>> {
  // An event belongs to the phase its email was accepted in (its writing time otherwise: the
  // deliveries of the drain would all land in the last phase).
  const phaseOfEmail = new Map<string, Phase>();
  for (const p of phases) {
    for (const k of p.keys) phaseOfEmail.set(load.accepted.get(k)!, p);
    for (const k of p.batchKeys) for (const id of mixed.batch.accepted.get(k)!) phaseOfEmail.set(id, p);
    for (const k of p.inboundKeys) phaseOfEmail.set(mixed.inbound.accepted.get(k)![0]!, p);
  }
  const started = performance.now();
  const db = new BetterSqlite3(join(dataDir, 'svc.sqlite'), { readonly: true });
  try {
    const endpoint = db.prepare('select id, from_seq from webhook_endpoints').get() as { id: string; from_seq: number };
    const marks = HOOK_EVENTS.map(() => '?').join(', ');
    let counted: { id: string; phase: Phase; whIds: Set<string>; received: number }[] = [];
    for (;;) {
      const events = db.prepare(`select id, created_at, data from events where seq > ? and type in (${marks})`).all(endpoint.from_seq, ...HOOK_EVENTS) as { id: string; created_at: string; data: string }[];
      const deliveries = db.prepare('select id, event_id from webhook_deliveries where endpoint_id = ?').all(endpoint.id) as { id: string; event_id: string }[];
      const eventOf = new Map(deliveries.map((d) => [d.id, d.event_id]));
      const phaseOf = (e: { created_at: string; data: string }) => phaseOfEmail.get((JSON.parse(e.data) as { email_id?: string }).email_id ?? '') ?? phaseAt(phases, Date.parse(e.created_at));
      const byEvent = new Map(events.map((e) => [e.id, { id: e.id, phase: phaseOf(e), whIds: new Set<string>(), received: 0 }]));
      for (const r of receiver.requests) {
        const event = byEvent.get(eventOf.get(r.headers['wh-id'] ?? '') ?? '');
        if (!event) continue;
        event.received++;
        event.whIds.add(r.headers['wh-id']!);
      }
      counted = [...byEvent.values()];
      if (counted.every((e) => e.received > 0) || performance.now() - started > timeoutMs) break;
      await sleep(500);
    }
    const rows = new Map<string, Row>(phases.map((p) => [p.fault, { fault: p.fault, load: 'webhooks', injections: p.injections, accepted: 0, delivered: 0, ambiguous: 0, lost: 0, duplicated: 0, bad: 0 }]));
    for (const e of counted) {
      const row = rows.get(e.phase.fault)!;
      row.accepted++;
      if (e.received > 0) row.delivered++;
      else row.lost++;
      if (e.received > 1) row.duplicated++;
      if (e.whIds.size > 1) row.bad = (row.bad ?? 0) + 1;
    }
    return rows;
  } finally {
    db.close();
  }
}

/** The strace probe: an fsync before every 200/250, and the probe fails when fsync is disabled. */
async function fsyncBeforeReply(): Promise<SoakOutcome['fsync']> {
  const unavailable = probeUnavailable({ eatmydata: true });
  if (unavailable) {
    console.log(`fsync before reply: not checked (${unavailable})`);
    return { skipped: unavailable, bad: false, checked: 0, violations: 0, flaggedWithoutFsync: 0, repliesWithoutFsync: 0 };
  }
  const on = await runFsyncProbe({ sends: FSYNC_N, receives: FSYNC_N });
  const off = await runFsyncProbe({ sends: FSYNC_N, receives: FSYNC_N, eatmydata: true });
  const checked = on.http + on.smtp;
  console.log(`fsync before reply: ${checked} replies checked (${on.http} 200s to POST /emails, ${on.smtp} 250s after DATA), ${on.violations.length} violations; ` +
    `fsyncs seen: database ${on.fsyncs.database}, spool ${on.fsyncs.spool}`);
  console.log(`fsync before reply, fsync disabled (eatmydata): ${off.violations.length} of ${off.http + off.smtp} replies flagged (the probe must flag them all)`);
  const bad = on.violations.length > 0 || checked !== 2 * FSYNC_N || off.http + off.smtp !== 2 * FSYNC_N || off.violations.length !== 2 * FSYNC_N;
  return { bad, checked, violations: on.violations.length, flaggedWithoutFsync: off.violations.length, repliesWithoutFsync: off.http + off.smtp };
}
