// The audience at scale, in one run: a generated CSV of BENCH_ROWS contacts (1,000,000) imported
// through POST /contacts/imports — rows/s from upload to `completed`, and the peak RSS of the jobs
// process that works the rows — beside SQLite's own batched-insert rate for the same rows on this
// machine (one table with the contacts table's indexes, prepared statements, one transaction per
// batch) and SQLite's rate for all the rows svc writes per imported contact, on svc's own schema;
// then count and first page of three representative segment filters over those contacts.
//
// svc runs as in production: the API in this process, the jobs role (the durable worker that
// imports) as a separate `bin/svc start --role jobs` process, so its RSS is its own. The machines
// are shared and noisy: compare the figures of one run, not across runs.
//
// Targets (issue #12): import ≥ 30,000 rows/s with the jobs process's peak RSS under 300 MiB; a
// three-condition count under 300 ms; a first page under 50 ms.
//
// Tuning (environment): BENCH_ROWS (1000000), BENCH_PAGE (50), BENCH_JOBS_NODE_OPTIONS (added to
// the jobs unit's NODE_OPTIONS, e.g. a CPU profile of the jobs process), BENCH_KEEP_DATA (a path:
// a copy of the database is kept there).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createWriteStream, mkdtempSync, openAsBlob, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { newId } from '../core/ids.js';
import { countMembers } from '../core/segments/index.js';
import { openDatabase } from '../storage/sql/index.js';
import { startTestAppliance } from '../test/helpers/appliance.js';
import { exitWithin } from '../test/helpers/deadline.js';
import { call } from '../test/helpers/http.js';
import { startTestRedis } from '../test/helpers/redis.js';
import { jobsUnitNodeOptions } from './service-flags.js';

const ROWS = intFromEnv('BENCH_ROWS', 1_000_000);
const PAGE = intFromEnv('BENCH_PAGE', 50);
const BATCH = 2000;
const svcBin = join(import.meta.dirname, '..', '..', 'bin', 'svc');
const FIRST = ['Ann', 'Bo', 'Cy', 'Dee', 'Eli', 'Fay', 'Gus', 'Hal'];
const PLANS = ['free', 'pro', 'team', 'enterprise'];

function intFromEnv(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
}

/** Row i of the generated audience: deterministic, so every run imports the same file. */
function row(i: number): [string, string, string, string, number] {
  return [`u${String(i).padStart(7, '0')}@example.com`, FIRST[i % FIRST.length]!, `Lee${i % 97}`, PLANS[i % PLANS.length]!, (i * 37) % 100];
}

async function writeCsv(path: string): Promise<number> {
  const out = createWriteStream(path);
  out.write('email,first_name,last_name,plan,score\n');
  for (let i = 0; i < ROWS; i++) {
    if (!out.write(`${row(i).join(',')}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return Number((await openAsBlob(path)).size);
}

/**
 * SQLite's own rate: the same rows into a table with the contacts table's indexes, keyed by the
 * ids svc gives contacts (UUIDv7, so the primary key is appended to as svc's is; a random UUID
 * made the reference itself slow down with the table: 31,000 rows/s at 200,000, 14,000-18,000 at
 * 1,000,000 on the same machine).
 */
function bareSqliteRate(dir: string): number {
  const db = new BetterSqlite3(join(dir, 'bare.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`create table contacts (id text primary key, team_id text not null, email text not null, email_key text not null,
    first_name text, last_name text, subscription_status text not null, origin text not null, created_at text not null, updated_at text not null);
    create unique index contacts_team_email on contacts (team_id, email_key);
    create index contacts_team on contacts (team_id, id);
    create index contacts_team_origin on contacts (team_id, origin);`);
  const insert = db.prepare('insert into contacts values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const now = new Date().toISOString();
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const [email, first, last] = row(i);
      insert.run(newId(), 'team', email, email.toLowerCase(), first, last, 'subscribed', 'import', now, now);
    }
  });
  const started = performance.now();
  for (let from = 0; from < ROWS; from += BATCH) batch(from, Math.min(ROWS, from + BATCH));
  const rate = ROWS / ((performance.now() - started) / 1000);
  db.close();
  return rate;
}

/**
 * SQLite's rate for the writes svc makes for each imported contact, on svc's own schema (a fresh
 * database migrated as svc opens it): the contact, its two property values, the consent record
 * (with its address hash) and the platform event, single-row prepared statements, BATCH a
 * transaction. What svc adds over this is its own work: parsing, checking, deciding.
 */
async function bareSvcWritesRate(dir: string): Promise<number> {
  const database = await openDatabase({ path: join(dir, 'writes.sqlite'), synchronous: 'FULL' });
  const db = database.sqlite;
  const contact = db.prepare(`insert into contacts (id, team_id, email, email_key, first_name, last_name, subscription_status, origin, created_at, updated_at)
    values (?, 'team', ?, ?, ?, ?, 'subscribed', 'import', ?, ?)`);
  const value = db.prepare(`insert into contact_property_values (contact_id, key, team_id, text_value, num_value) values (?, ?, 'team', ?, ?)
    on conflict (contact_id, key) do update set text_value = excluded.text_value, num_value = excluded.num_value`);
  const consent = db.prepare(`insert into consent_records (id, team_id, contact_id, email_hash, kind, topic_id, value, source, ip, user_agent, created_at)
    values (?, 'team', ?, ?, 'subscription', null, 'subscribed', 'import', '127.0.0.1', 'bench', ?)`);
  const event = db.prepare(`insert into platform_events (id, team_id, type, contact_id, data, created_at) values (?, 'team', 'svc:contact.created', ?, ?, ?)`);
  const now = new Date().toISOString();
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const [email, first, last, plan, score] = row(i);
      const id = newId();
      contact.run(id, email, email.toLowerCase(), first, last, now, now);
      value.run(id, 'plan', plan, null);
      value.run(id, 'score', null, score);
      consent.run(newId(), id, createHmac('sha256', 'bench').update(email.toLowerCase()).digest('hex'), now);
      event.run(newId(), id, JSON.stringify({ contact_id: id }), now);
    }
  });
  const started = performance.now();
  for (let from = 0; from < ROWS; from += BATCH) batch(from, Math.min(ROWS, from + BATCH));
  const rate = ROWS / ((performance.now() - started) / 1000);
  await database.close();
  return rate;
}

/** The peak resident set (VmHWM) of a live process, in MiB. */
function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

function spawnJobs(dataDir: string, redisUrl: string): ChildProcess {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_MAIL_HOSTNAME: 'mta.svc-test.net',
    SVC_DATA_DIR: dataDir, SVC_REDIS_URL: redisUrl, SVC_LOG_LEVEL: 'warn', SVC_WORK_POLL_MS: '50', SVC_SCANNER_CLAMD: '',
    // The installed unit's node options (its heap ceiling), then the bench's own: a profile of the
    // importing process with BENCH_JOBS_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
    NODE_OPTIONS: jobsUnitNodeOptions(process.env.BENCH_JOBS_NODE_OPTIONS),
  };
  return spawn(svcBin, ['start', '--role', 'jobs'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
}

interface ImportFigures { seconds: number; rowsPerSec: number; peakRssMb: number; counts: Record<string, number> }

async function importThroughSvc(baseUrl: string, token: string, csvPath: string, jobs: ChildProcess): Promise<ImportFigures> {
  const form = new FormData();
  form.append('column_map', JSON.stringify({
    email: 'email', first_name: 'first_name', last_name: 'last_name', properties: { plan: 'plan', score: { column: 'score', type: 'number' } },
  }));
  form.append('file', await openAsBlob(csvPath, { type: 'text/csv' }), 'audience.csv');
  const started = performance.now();
  const res = await fetch(`${baseUrl}/contacts/imports`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(120_000) });
  const created = await res.json() as { id?: string };
  if (res.status !== 201 || !created.id) throw new Error(`import refused: ${res.status} ${JSON.stringify(created)}`);
  let peak = 0;
  for (;;) {
    peak = Math.max(peak, peakRssMb(jobs.pid!));
    const r = await call(baseUrl, 'GET', `/contacts/imports/${created.id}`, { token });
    if (r.body.status === 'completed' || r.body.status === 'failed') {
      const seconds = (performance.now() - started) / 1000;
      return { seconds, rowsPerSec: ROWS / seconds, peakRssMb: Math.max(peak, peakRssMb(jobs.pid!)), counts: r.body.counts };
    }
    if (performance.now() - started > 30 * 60_000) throw new Error('the import did not finish within 30 minutes');
    await sleep(250);
  }
}

const filters = (newsTopic: string) => [
  { name: 'one property', filter: { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }] } },
  {
    name: 'three conditions (property, number range, topic)',
    filter: { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }, { field: 'properties.score', op: 'gte', value: 50 }, { topic: newsTopic, subscription: 'opt_in' }] },
  },
  {
    name: 'any of names, not a property',
    filter: { any: [{ field: 'first_name', op: 'in', value: ['Ann', 'Bo'] }, { not: { field: 'properties.plan', op: 'in', value: ['free', 'team', 'pro'] } }] },
  },
];

/** Median of three timings of `fn`, in ms, and its last answer. */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const times: number[] = [];
  let value!: T;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    value = await fn();
    times.push(performance.now() - t0);
  }
  return { ms: times.sort((a, b) => a - b)[1]!, value };
}

async function segmentFigures(app: Awaited<ReturnType<typeof startTestAppliance>>, token: string, teamId: string) {
  const news = await call(app.baseUrl, 'POST', '/topics', { token, body: { name: 'News', default_subscription: 'opt_in' } });
  const db = app.appliance.services.database.db;
  for (const { name, filter } of filters(news.body.id)) {
    const seg = await call(app.baseUrl, 'POST', '/segments', { token, body: { name, filter } });
    if (seg.status !== 201) throw new Error(`segment refused: ${JSON.stringify(seg.body)}`);
    const count = await timed(() => countMembers(db, teamId, seg.body.id));
    const page = await timed(async () => (await call(app.baseUrl, 'GET', `/segments/${seg.body.id}/contacts?limit=${PAGE}`, { token })).body.data.length as number);
    console.log(`segment "${name}": ${count.value} members, count ${count.ms.toFixed(0)} ms, first page of ${page.value} ${page.ms.toFixed(1)} ms (HTTP)`);
  }
}

async function stopJobs(jobs: ChildProcess): Promise<void> {
  jobs.kill('SIGTERM');
  await exitWithin('the jobs process to stop', jobs, 60_000);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-audience-'));
  const redis = await startTestRedis();
  const app = await startTestAppliance({ redis, roles: ['api'], env: { SVC_RATE_LIMIT_BURST: '1000000', SVC_RATE_LIMIT_PER_SECOND: '1000000' } });
  let jobs: ChildProcess | undefined;
  try {
    const csv = join(dir, 'audience.csv');
    const bytes = await writeCsv(csv);
    console.log(`audience bench: ${ROWS} rows, ${(bytes / 1048576).toFixed(1)} MiB of CSV`);
    const bare = bareSqliteRate(dir);
    console.log(`SQLite bare batched insert (same rows and indexes, ${BATCH} a transaction): ${bare.toFixed(0)} rows/s`);
    const writes = await bareSvcWritesRate(dir);
    console.log(`SQLite bare, svc's writes of a contact (svc's schema: contact, 2 values, consent, event; ${BATCH} a transaction): ${writes.toFixed(0)} rows/s`);
    const team = await app.newTeam('Audience bench');
    jobs = spawnJobs(app.config.data_dir, redis.url);
    const figures = await importThroughSvc(app.baseUrl, team.token, csv, jobs);
    console.log(`svc import: ${figures.rowsPerSec.toFixed(0)} rows/s (${figures.seconds.toFixed(1)} s, ${(figures.rowsPerSec / bare).toFixed(2)}× SQLite bare, `
      + `${(figures.rowsPerSec / writes).toFixed(2)}× svc's writes bare), `
      + `jobs process peak RSS ${figures.peakRssMb.toFixed(0)} MiB, counts ${JSON.stringify(figures.counts)}`);
    await segmentFigures(app, team.token, team.teamId);
    // BENCH_KEEP_DATA=<path>: a copy of the imported database, to study the segment queries' plans.
    // Taken once the jobs process has stopped: an online backup starts over whenever another
    // connection writes, and the worker's leases write every few seconds.
    if (process.env.BENCH_KEEP_DATA) {
      await stopJobs(jobs);
      jobs = undefined;
      await app.appliance.services.database.sqlite.backup(process.env.BENCH_KEEP_DATA);
    }
  } finally {
    if (jobs) await stopJobs(jobs);
    await app.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
