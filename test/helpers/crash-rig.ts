import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { deliveryRecorder } from '../../core/emails/delivery.js';
import { sweepAmbiguous } from '../../core/emails/ambiguous.js';
import type { Db } from '../../storage/sql/index.js';
import { startTestAppliance, type TestAppliance } from './appliance.js';
import type { TestDnsServer } from './dns-server.js';
import { startFakeMx, type FakeMx } from './fake-mx.js';
import { call } from './http.js';
import { startTestRedis, type TestRedis } from './redis.js';
import { verifyDomainThroughApi } from './sending.js';
import { exitWithin, waitFor } from './deadline.js';
import { mailZone } from './email-fixtures.js';
import { svcBin } from './faults-svc.js';

// The crash rig (test and bench): emails are accepted by an in-process API, then delivered by a
// real `bin/svc start --role outbound` child on the same data folder and Redis, which is killed
// with SIGKILL at random moments while it delivers and started again each time. In the end
// every accepted email must be delivered exactly once (counted at the MX by Message-ID) or
// failed with a reason; none lost, none delivered twice.


export interface CrashOptions {
  emails: number;
  kills: number;
  /** The MX waits this long before its 250 (a crash can land between the data and the reply). */
  replyDelayMs: number;
  concurrency: number;
  log?: (line: string) => void;
}

export interface CrashResult {
  accepted: number;
  delivered: number;
  failed: { reason: string; count: number }[];
  other: Record<string, number>;
  kills: number;
  /** Message-IDs the MX took more than once. */
  duplicates: string[];
  /** Delivered in svc but never taken by the MX, or the reverse. */
  deliveredNotAtMx: number;
  atMxNotRecorded: number;
  seconds: number;
}

interface Rig {
  redis: TestRedis;
  dns: TestDnsServer;
  mx: FakeMx;
  app: TestAppliance;
  token: string;
}

async function startRig(options: CrashOptions): Promise<Rig> {
  const redis = await startTestRedis();
  const dns = await mailZone(['inbox-one.net']);
  const mx = await startFakeMx({ replyDelayMs: options.replyDelayMs, keepRaw: false });
  const app = await startTestAppliance({
    redis, roles: ['api'],
    env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' },
  });
  const team = await app.newTeam('Crash');
  await verifyDomainThroughApi(app.baseUrl, team.token, dns, 'crash-sender.net');
  return { redis, dns, mx, app, token: team.token };
}

function spawnOutbound(rig: Rig, options: CrashOptions): ChildProcess {
  return spawnOutboundProcess({
    SVC_DATA_DIR: rig.app.config.data_dir, SVC_REDIS_URL: rig.redis.url, SVC_DNS_SERVERS: rig.dns.address,
    SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(rig.mx.port), SVC_OUTBOUND_POLL_S: '1', SVC_LOG_LEVEL: 'error',
    SVC_REGIONS: JSON.stringify({ 'us-east-1': { concurrency: options.concurrency, per_domain_connections: options.concurrency } }),
  });
}

/** `bin/svc start --role outbound` with only these settings (nothing from the caller's SVC_*). */
export function spawnOutboundProcess(settings: Record<string, string>, logFile?: string): ChildProcess {
  return spawnRoleProcess('outbound', settings, logFile);
}

/** `bin/svc start --role <role>` with only these settings (nothing from the caller's SVC_*). */
export function spawnRoleProcess(role: string, settings: Record<string, string>, logFile?: string): ChildProcess {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_MAIL_HOSTNAME: 'mta.svc-test.net', ...settings };
  const out = logFile ? openSync(logFile, 'a') : 'ignore';
  return spawn(svcBin, ['start', '--role', role], { env, stdio: ['ignore', out, 'inherit'] });
}

/** Resolves once the outbound child is gone (a SIGKILL or SIGTERM was sent); fails after 60 s. */
export const exited = (child: ChildProcess) => exitWithin(`outbound child ${child.pid} to exit`, child, 60_000);

async function acceptEmails(rig: Rig, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 100) {
    const items = Array.from({ length: Math.min(100, count - start) }, (_, i) => ({
      from: 'Crash <c@crash-sender.net>', to: `r${start + i}@inbox-one.net`, subject: `Crash ${start + i}`, text: `Message ${start + i}`,
    }));
    const r = await call(rig.app.baseUrl, 'POST', '/emails/batch', { token: rig.token, body: items });
    if (r.status !== 200) throw new Error(`batch refused: ${JSON.stringify(r.body)}`);
    ids.push(...r.body.data.map((d: { id: string }) => d.id));
  }
  return ids;
}

const states = async (db: Db) => {
  const rows = await db.selectFrom('email_recipients').select(['state']).execute();
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.state] = (counts[r.state] ?? 0) + 1;
  return counts;
};

export async function runCrashRig(options: CrashOptions): Promise<CrashResult> {
  const log = options.log ?? (() => undefined);
  const rig = await startRig(options);
  const started = Date.now();
  try {
    const ids = await acceptEmails(rig, options.emails);
    const db = rig.app.appliance.services.database.db;
    let kills = 0;
    while (kills < options.kills) {
      const child = spawnOutbound(rig, options);
      const before = rig.mx.received.length;
      // Let it deliver a little, then kill it at a random moment.
      await waitFor('the child to deliver', async () => rig.mx.received.length >= before + 3 || (await states(db)).queued === undefined, 30_000);
      await new Promise((r) => setTimeout(r, Math.random() * 250));
      child.kill('SIGKILL');
      await exited(child);
      kills++;
      log(`kill ${kills}: MX has ${rig.mx.received.length} messages; states ${JSON.stringify(await states(db))}`);
    }
    const final = spawnOutbound(rig, options);
    await waitFor('the queue to drain', async () => { const s = await states(db); return !s.queued && !s.submitting; }, 120_000);
    final.kill('SIGTERM');
    await exited(final);
    // Two hours later: ambiguous submissions without a report fail.
    const later = { now: () => new Date(Date.now() + 2 * 3600_000 + 60_000) };
    const services = rig.app.appliance.services;
    await sweepAmbiguous({ db, clock: later, logger: services.logger, recorder: deliveryRecorder({ db, clock: later, logger: services.logger, queueLifetimeMs: 72 * 3600_000 }) });
    return await tally(rig, db, ids, kills, started);
  } finally {
    await rig.app.stop();
    await rig.mx.stop();
    await rig.dns.stop();
    await rig.redis.stop();
  }
}

async function tally(rig: Rig, db: Db, ids: string[], kills: number, started: number): Promise<CrashResult> {
  const rows = await db.selectFrom('email_recipients').innerJoin('emails', 'emails.id', 'email_recipients.email_id')
    .select(['emails.message_id', 'email_recipients.state']).execute();
  const atMx = rig.mx.accepted();
  const failedRows = await db.selectFrom('events').select(['data']).where('type', '=', 'email.failed').execute();
  const reasons = new Map<string, number>();
  for (const e of failedRows) {
    const reason = (JSON.parse(e.data) as { failed?: { reason?: string } }).failed?.reason ?? 'none';
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const other: Record<string, number> = {};
  let delivered = 0;
  let deliveredNotAtMx = 0;
  for (const r of rows) {
    if (r.state === 'delivered') {
      delivered++;
      if ((atMx.get(r.message_id) ?? 0) !== 1) deliveredNotAtMx++;
    } else if (r.state !== 'failed') other[r.state] = (other[r.state] ?? 0) + 1;
  }
  const known = new Set(rows.map((r) => r.message_id));
  return {
    accepted: ids.length, delivered, kills,
    failed: [...reasons].map(([reason, count]) => ({ reason, count })),
    other,
    duplicates: [...atMx].filter(([, n]) => n > 1).map(([id]) => id),
    deliveredNotAtMx,
    atMxNotRecorded: [...atMx.keys()].filter((id) => !known.has(id)).length,
    seconds: Math.round((Date.now() - started) / 1000),
  };
}
