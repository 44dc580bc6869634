// Metrics over a month of a busy team: one million outbox events, folded by the rollup, then
// GET /emails/metrics timed over HTTP.
//
// Inside this process: a real appliance (api role, temp data folder, SQLite with the shipped
// synchronous=FULL, private redis-server) on a clock fixed just after the month. The team has
// BENCH_DOMAINS domains (created through POST /domains); its emails are written as rows (with one
// recipient each) and their events straight into the outbox through the events repo, in
// transactions of 20,000, with the data shapes the sending code writes: per email sent, then
// delivered (97%) or bounced, delivery_delayed (2%), opened (40%, a quarter of them twice),
// clicked (10%); plus received mail (one per ten emails) — until BENCH_EVENTS events, spread
// evenly over BENCH_DAYS days. Then the rollup folds them batch by batch (one transaction each,
// as the jobs loop does, without its pauses) and each query runs BENCH_RUNS times, in
// America/New_York so the DST-aware bucketing is part of the cost. It prints the figures, stops
// the appliance, removes its folder and exits.
//
// Settings (environment): BENCH_EVENTS (1000000), BENCH_DAYS (30), BENCH_DOMAINS (5),
// BENCH_RUNS (15), BENCH_BATCH (5000: events per rollup transaction).
import { statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { envelopeData } from '../core/emails/envelope.js';
import { emitEvent, type EventType } from '../core/outbox/index.js';
import { metricsRollup } from '../core/metrics/index.js';
import { newId } from '../core/ids.js';
import type { EmailRecipientRow, EmailRow } from '../storage/repos/index.js';
import { eventsRepo } from '../storage/repos/index.js';
import { inTransaction } from '../storage/sql/index.js';
import { startTestAppliance } from '../test/helpers/appliance.js';
import { call } from '../test/helpers/http.js';
import { intFromEnv, seededRandom } from './settings.js';

const EVENTS = intFromEnv('BENCH_EVENTS', 1_000_000);
const DAYS = intFromEnv('BENCH_DAYS', 30);
const DOMAINS = intFromEnv('BENCH_DOMAINS', 5);
const RUNS = intFromEnv('BENCH_RUNS', 15);
const BATCH = intFromEnv('BENCH_BATCH', 5000);
const END = new Date('2026-07-01T00:00:00.000Z');
const TX_EVENTS = 20_000;

interface PlannedEvent { type: EventType; at: number; extra?: Record<string, unknown>; to?: string }

function emailRow(teamId: string, domainId: string, domain: string, createdAt: number, i: number): EmailRow {
  const id = newId();
  const at = new Date(createdAt).toISOString();
  const address = `customer${i}@inbox-${i % 97}.example`;
  return {
    id, team_id: teamId, api_key_id: null, domain_id: domainId, region: 'us-east-1', from_header: `Shop <orders@${domain}>`,
    from_email: `orders@${domain}`, to_json: JSON.stringify([{ address }]), cc_json: null, bcc_json: null, reply_to_json: null,
    subject: `Your order #${100000 + i} has shipped`, html: null, text: 'Your order is on its way.', headers_json: null,
    tags_json: JSON.stringify([{ name: 'category', value: 'shipping' }]), topic_id: null, template_id: null, template_version: null,
    message_id: `<${id}@${domain}>`, scheduled_at: null, status: 'dispatched', last_event: 'delivered', recipients_text: address,
    recipient_count: 1, content_hash: `h${i % 1000}`, has_unsubscribe: 0, attachment_count: 0, created_at: at, updated_at: at,
  };
}

function eventsOf(createdAt: number, next: () => number): PlannedEvent[] {
  const minute = 60_000;
  const out: PlannedEvent[] = [{ type: 'email.sent', at: createdAt + 2_000 }];
  if (next() < 0.02) out.push({ type: 'email.delivery_delayed', at: createdAt + 5_000, extra: { delay: { type: 'General', expirationTime: new Date(createdAt + 72 * 3600_000).toISOString() } } });
  if (next() < 0.97) {
    out.push({ type: 'email.delivered', at: createdAt + 4_000 });
    if (next() < 0.4) {
      const openAt = createdAt + Math.floor(next() * 600) * minute;
      out.push({ type: 'email.opened', at: openAt, extra: { open: { ipAddress: '192.0.2.7', timestamp: new Date(openAt).toISOString(), userAgent: 'Mozilla/5.0' } } });
      if (next() < 0.25) out.push({ type: 'email.opened', at: openAt + 1440 * minute });
      if (next() < 0.25) out.push({ type: 'email.clicked', at: openAt + minute, extra: { click: { ipAddress: '192.0.2.7', link: 'https://shop.example/track', timestamp: new Date(openAt + minute).toISOString(), userAgent: 'Mozilla/5.0' } } });
    }
  } else {
    out.push({ type: 'email.bounced', at: createdAt + 4_000, extra: { bounce: { type: next() < 0.7 ? 'Permanent' : 'Transient', subType: 'General', message: 'refused', diagnosticCode: ['550 5.1.1 unknown user'] } } });
  }
  return out.filter((e) => e.at < END.getTime());
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

/**
 * Times one query over HTTP (what a client sees) and through the service alone (the endpoint's own
 * work, without HTTP, auth and the request log), with this process's CPU time per HTTP call: on a
 * shared machine the CPU figure moves far less than the wall-clock one.
 */
async function timeQuery(baseUrl: string, token: string, service: (query: Record<string, string>) => Promise<unknown>, label: string, query: Record<string, string>) {
  const qs = new URLSearchParams(query).toString();
  const times: number[] = [];
  let rows = 0;
  // One untimed call first: it also replaces a kept-alive connection the server closed meanwhile.
  await call(baseUrl, 'GET', `/emails/metrics?${qs}`, { token }).catch(() => undefined);
  const cpuStart = cpuMs();
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const r = await call(baseUrl, 'GET', `/emails/metrics?${qs}`, { token });
    times.push(performance.now() - started);
    if (r.status !== 200) throw new Error(`${label}: ${r.status} ${JSON.stringify(r.body)}`);
    rows = r.body.data?.length ?? 0;
  }
  const cpuPerCall = (cpuMs() - cpuStart) / RUNS;
  const inService: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await service(query);
    inService.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  inService.sort((a, b) => a - b);
  console.log(`query ${label} (${rows} data rows): HTTP p50 ${pct(times, 0.5).toFixed(1)} ms, p90 ${pct(times, 0.9).toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms, ${cpuPerCall.toFixed(1)} ms CPU per call; service alone p50 ${pct(inService, 0.5).toFixed(1)} ms`);
}

async function main() {
  const clock = { now: () => new Date(END.getTime() + 30_000) };
  const app = await startTestAppliance({
    clock,
    env: {
      SVC_LOG_LEVEL: 'silent', SVC_METRICS_QUERY_CATCH_UP_EVENTS: '0', SVC_METRICS_ROLLUP_BATCH_SIZE: String(BATCH),
      SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000',
    },
  });
  try {
    const db = app.appliance.services.database.db;
    const team = await app.newTeam('Busy');
    const domains: { id: string; name: string }[] = [];
    for (let d = 0; d < DOMAINS; d++) {
      const name = `shop-${d + 1}.bench-svc.net`;
      const r = await call(app.baseUrl, 'POST', '/domains', { token: team.token, body: { name } });
      if (r.status !== 200 && r.status !== 201) throw new Error(`POST /domains: ${JSON.stringify(r.body)}`);
      domains.push({ id: r.body.id, name });
    }

    // Write emails and their events until EVENTS events, spread over the month.
    const next = seededRandom(42);
    const start = END.getTime() - DAYS * 86_400_000;
    const emailsNeeded = Math.ceil(EVENTS / 2.3);
    let written = 0;
    let emails = 0;
    const writeStarted = performance.now();
    while (written < EVENTS) {
      await inTransaction(db, async (trx) => {
        const events = eventsRepo(trx);
        const rows: EmailRow[] = [];
        const recipients: EmailRecipientRow[] = [];
        let inTx = 0;
        while (inTx < TX_EVENTS && written + inTx < EVENTS) {
          const createdAt = start + Math.floor((emails / emailsNeeded) * DAYS * 86_400_000);
          const domain = domains[emails % domains.length]!;
          const row = emailRow(team.teamId, domain.id, domain.name, createdAt, emails);
          rows.push(row);
          recipients.push({
            id: `${row.id}.0`, email_id: row.id, team_id: team.teamId, region: 'us-east-1', idx: 0, address: row.recipients_text,
            domain: row.recipients_text.split('@')[1]!, kind: 'to', state: 'delivered', attempts: 1, next_attempt_at: null,
            first_attempt_at: row.created_at, submitted_at: row.created_at, expires_at: null, last_response: '250 ok',
            bounce_type: null, bounce_sub_type: null, updated_at: row.created_at,
          });
          for (const e of eventsOf(createdAt, next)) {
            if (written + inTx >= EVENTS) break;
            const data = e.type === 'email.sent' ? envelopeData(row) : envelopeData(row, [row.recipients_text], e.extra ?? {});
            await emitEvent(events, team.teamId, e.type, data, new Date(e.at));
            inTx++;
          }
          if (emails % 10 === 0 && written + inTx < EVENTS) {
            const at = new Date(Math.min(createdAt + 30_000, END.getTime() - 1));
            await emitEvent(events, team.teamId, 'email.received', { email_id: newId(), created_at: at.toISOString(), from: 'Customer <c@inbox.example>', to: [`support@${domain.name}`], cc: [], bcc: [], received_for: [`support@${domain.name}`], message_id: '<m@inbox.example>', subject: 'Question', attachments: [] }, at);
            inTx++;
          }
          emails++;
        }
        for (let i = 0; i < rows.length; i += 500) await trx.insertInto('emails').values(rows.slice(i, i + 500)).execute();
        for (let i = 0; i < recipients.length; i += 1000) await trx.insertInto('email_recipients').values(recipients.slice(i, i + 1000)).execute();
        written += inTx;
      });
    }
    const writeSeconds = (performance.now() - writeStarted) / 1000;
    console.log(`outbox: ${written} events for ${emails} emails over ${DAYS} days, ${DOMAINS} domains, written in ${writeSeconds.toFixed(1)} s`);

    // Fold them: the jobs loop's batches, without its pauses between them.
    const rollup = metricsRollup({ db, batchSize: BATCH, pauseRatio: 0 });
    const rollStarted = performance.now();
    const rollCpu = cpuMs();
    const { events: folded } = await rollup.catchUp();
    const rollSeconds = (performance.now() - rollStarted) / 1000;
    const rollCpuSeconds = (cpuMs() - rollCpu) / 1000;
    console.log(`rollup: ${folded} events in ${rollSeconds.toFixed(1)} s = ${Math.round(folded / rollSeconds)} events/s (${Math.round(folded / rollCpuSeconds)} per CPU-second; batches of ${BATCH}, one transaction each)`);
    const count = async (table: 'metrics_minutes' | 'metrics_email_minutes' | 'metrics_email_marks') =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    console.log(`rollup rows: metrics_minutes ${await count('metrics_minutes')}, metrics_email_minutes ${await count('metrics_email_minutes')}, marks ${await count('metrics_email_marks')}; database ${(statSync(join(app.config.data_dir, 'svc.sqlite')).size / 2 ** 20).toFixed(0)} MiB`);

    const month = { start_date: new Date(END.getTime() - DAYS * 86_400_000).toISOString().slice(0, 10), end_date: END.toISOString(), timezone: 'America/New_York' };
    const service = (query: Record<string, string>) => app.appliance.services.api.sending.metrics.get(team.teamId, query);
    const time = (label: string, query: Record<string, string>) => timeQuery(app.baseUrl, team.token, service, label, query);
    await time(`${DAYS}-day totals, no dimension`, month);
    await time(`${DAYS}-day daily`, { ...month, dimensions: 'period', granularity: 'daily' });
    await time(`${DAYS}-day hourly by domain`, { ...month, dimensions: 'period,domain', granularity: 'hourly' });
    await time(`${DAYS}-day hourly by domain, 3 metrics`, { ...month, dimensions: 'period,domain', granularity: 'hourly', metrics: 'sent,delivered,delivery_rate' });
    const someEmails = await db.selectFrom('emails').select('id').where('team_id', '=', team.teamId).orderBy('id').limit(100).execute();
    await time(`${DAYS}-day daily for 100 email ids`, { ...month, dimensions: 'period', email_id: someEmails.map((e) => e.id).join(',') });
    console.log(`load average (1, 5, 15 min): ${loadavg().map((l) => l.toFixed(1)).join(', ')} on ${cpus().length} CPUs`);
  } finally {
    await app.stop();
  }
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
