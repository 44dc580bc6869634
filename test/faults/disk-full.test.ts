import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { waitFor, withDeadline } from '../helpers/deadline.js';
import { startFakeMx, type FakeMx } from '../helpers/fake-mx.js';
import { spawnSvc, type SvcProcess } from '../helpers/faults-svc.js';
import { call, type CallResult } from '../helpers/http.js';
import { verifyDomainThroughApi } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { publish, regionHosts, type WireRecord } from '../helpers/domain-fixtures.js';
import { rawSmtp } from '../helpers/raw-smtp.js';

// Disk full: `bin/svc start` (every role) runs on a 24 MiB tmpfs as its data folder. With the file
// system filled by a ballast file, POST /emails answers 503 service_unavailable (or 200 for an
// email that did reach the disk), inbound SMTP answers 452 4.3.1 (or 451) — never a 5xx — and
// /ready names storage. Once the ballast goes, sending and receiving work again without a
// restart, the database passes integrity_check, and everything answered 200/250 is there.
// 24 MiB: a new database's migrations write about 11 MiB of WAL with 16 KiB pages (db.ts) before
// the first checkpoint; the ballast takes whatever is left.
const mountDir = mkdtempSync(join(tmpdir(), 'svc-diskfull-'));
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m,mode=0750', 'tmpfs', mountDir], { encoding: 'utf8' });
if (mounted.error || mounted.status !== 0) {
  rmSync(mountDir, { recursive: true, force: true });
  const why = mounted.error?.message ?? mounted.stderr.trim().split('\n')[0];
  t.plan(0, `skip: cannot mount a small tmpfs as the data folder (needs root with CAP_SYS_ADMIN): ${why}`);
} else {
  t.teardown(() => {
    spawnSync('umount', ['-l', mountDir]);
    rmSync(mountDir, { recursive: true, force: true });
  });
  await run(await startRig(mountDir));
}

interface Inbound { label: string; replies: string[]; after: string }

interface Rig {
  dataDir: string;
  svc: SvcProcess;
  mx: FakeMx;
  token: string;
  /** POST /emails with the Idempotency-Key `full-<label>`. */
  send(label: string): Promise<CallResult>;
  /** One inbound message (of about `bodyBytes`): the session's replies, then RSET's. */
  receive(label: string, bodyBytes?: number): Promise<Inbound>;
}

async function startRig(dataDir: string): Promise<Rig> {
  const dns = await mailZone(['inbox-one.net']);
  const mx = await startFakeMx({ keepRaw: false });
  let svc: SvcProcess | undefined;
  t.teardown(async () => {
    svc?.proc.kill('SIGKILL');
    if (svc) await withDeadline('svc to exit after SIGKILL', svc.exited);
    await mx.stop();
    await dns.stop();
  });
  svc = await spawnSvc({
    dataDir,
    env: {
      SVC_DNS_SERVERS: dns.address, SVC_DNS_TIMEOUT_MS: '1000', SVC_DNS_CACHE_TTL_S: '0', SVC_MAIL_HOSTNAME: 'mta.svc-host.net',
      SVC_REGIONS: JSON.stringify(regionHosts), SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_POLL_S: '2',
      SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000', SVC_DOMAINS_RECHECK_CRON: '0 0 1 1 *', SVC_LOG_LEVEL: 'warn',
    },
  });
  await svc.ready();
  const { baseUrl, smtpPort } = svc;
  const { token } = await svc.newTeam('Full');
  await verifyDomainThroughApi(baseUrl, token, dns, 'full-sender.net');
  const inbox = await call(baseUrl, 'POST', '/domains', { token, body: { name: 'full-inbox.net', capabilities: { receiving: 'enabled' } } });
  for (const r of inbox.body.records as WireRecord[]) publish(dns, 'full-inbox.net', r);
  if ((await call(baseUrl, 'POST', `/domains/${inbox.body.id}/verify`, { token })).body.status !== 'verified') throw new Error('receiving domain did not verify');
  return {
    dataDir, svc, mx, token,
    send: (label) => call(baseUrl, 'POST', '/emails', {
      token, headers: { 'idempotency-key': `full-${label}` },
      body: { from: 'Full <f@full-sender.net>', to: `r-${label}@inbox-one.net`, subject: `Full ${label}`, text: `Message ${label}` },
    }),
    async receive(label, bodyBytes = 0) {
      const s = await rawSmtp(smtpPort);
      try {
        const replies = [await s.command('EHLO far.example'), await s.command('MAIL FROM:<far@far.example>'), await s.command('RCPT TO:<desk@full-inbox.net>')];
        if (!replies[2]!.startsWith('250')) return { label, replies, after: '' };
        replies.push(await s.command('DATA'));
        if (!replies[3]!.startsWith('354')) return { label, replies, after: '' };
        const filler = `${'x'.repeat(76)}\r\n`.repeat(Math.ceil(bodyBytes / 78));
        replies.push(await s.sendRaw(`From: far@far.example\r\nTo: desk@full-inbox.net\r\nSubject: Inbound ${label}\r\n\r\nBody ${label}\r\n${filler}.\r\n`));
        // The session is still in step after a refused message.
        return { label, replies, after: await s.command('RSET') };
      } finally {
        s.close();
      }
    },
  };
}

async function run(rig: Rig): Promise<void> {
  const { svc, send, receive } = rig;
  // Before: answered 200 and 250 with room to spare.
  const sent = new Map<string, string>();
  const received = new Set<string>();
  for (let i = 0; i < 5; i++) {
    const r = await send(`before-${i}`);
    if (r.status !== 200) throw new Error(`send before: ${JSON.stringify(r.body)}`);
    sent.set(`before-${i}`, r.body.id);
  }
  for (let i = 0; i < 3; i++) {
    const r = await receive(`before-${i}`);
    if (!r.replies[4]?.startsWith('250')) throw new Error(`receive before: ${r.replies.join(' | ')}`);
    received.add(`Inbound before-${i}`);
  }

  // Full: a ballast file takes every byte left.
  const ballast = join(rig.dataDir, 'ballast');
  const ballastBytes = fill(ballast);
  const blocksLeft = statfsSync(rig.dataDir).bavail;
  const sends: CallResult[] = [];
  for (let i = 0; i < 200 && sends.filter((s) => s.status === 503).length < 5; i++) {
    const r = await send(`full-${i}`);
    sends.push(r);
    if (r.status === 200) sent.set(`full-${i}`, r.body.id);
  }
  const inbound: Inbound[] = [];
  const refusedInbound = () => inbound.filter((m) => /^45[12] /.test(m.replies.at(-1)!)).length;
  for (let i = 0; i < 60 && refusedInbound() < 4; i++) inbound.push(await receive(`full-${i}`));
  // A message of many chunks: the write fails part way, the reply still comes at the terminator.
  const big = await receive('full-big', 256 * 1024);
  inbound.push(big);
  for (const m of inbound) if (m.replies[4]?.startsWith('250')) received.add(`Inbound ${m.label}`);
  const readyWhileFull = await call(svc.baseUrl, 'GET', '/ready');

  t.test('the ballast filled the file system', async (t) => {
    t.ok(ballastBytes > 0, `the ballast took ${(ballastBytes / 1024 / 1024).toFixed(2)} MiB`);
    t.equal(blocksLeft, 0, 'no block was left for svc');
  });

  t.test('with the disk full, the API answers 503 service_unavailable, never 500', async (t) => {
    const statuses = sends.map((s) => s.status);
    t.same(statuses.filter((s) => s !== 200 && s !== 503), [], 'every send answered 200 or 503');
    const refused = sends.filter((s) => s.status === 503);
    t.ok(refused.length >= 1, 'the full disk was refused with 503');
    for (const r of refused) t.match(r.body, { statusCode: 503, name: 'service_unavailable', message: /storage/i }, 'the spec\'s error body');
    const logged = svc.output().stdout.split('\n').filter((l) => l.includes('request refused: storage unavailable'));
    t.ok(logged.length >= refused.length, 'each refusal is logged');
    const causes = logged.map((l) => (JSON.parse(l) as { storage?: unknown }).storage);
    t.same(causes.filter((c) => typeof c !== 'string' || c === ''), [], 'each log line names its storage cause');
  });

  t.test('with the disk full, inbound SMTP answers 452 (or 451), never 5xx', async (t) => {
    for (const m of inbound) {
      t.same(m.replies.filter((r) => /^5/.test(r)), [], `${m.label}: no permanent refusal (${m.replies.slice(2).join(' | ')})`);
      t.match(m.replies.at(-1), /^(250|452|451) /, `${m.label}: a 250 or a temporary failure`);
      if (m.replies.length === 5) t.match(m.after, /^250/, `${m.label}: the session is in step afterwards`);
    }
    const full = inbound.filter((m) => /^452 4\.3\.1 /.test(m.replies.at(-1)!));
    t.ok(full.length >= 1, `452 4.3.1 for a full disk (${full.length} of ${inbound.length})`);
    t.match(big.replies.at(-1), /^45[12] |^250 /, `the message of many chunks: ${big.replies.at(-1)}`);
  });

  t.test('/ready says degraded naming storage while the disk is full', async (t) => {
    t.equal(readyWhileFull.status, 503);
    t.ok(readyWhileFull.body.failed.includes('storage'), JSON.stringify(readyWhileFull.body.failed));
  });

  t.test('space returns: sending and receiving work again without a restart', async (t) => {
    unlinkSync(ballast);
    const after = await send('after');
    t.equal(after.status, 200, JSON.stringify(after.body));
    if (after.status === 200) sent.set('after', after.body.id);
    // A key refused with 503 was not spent: the client's retry is taken now.
    const retried = await send('full-0');
    t.equal(retried.status, 200, `the retry of a refused send: ${JSON.stringify(retried.body)}`);
    if (retried.status === 200) sent.set('full-0', retried.body.id);
    const inboundAfter = await receive('after');
    t.match(inboundAfter.replies[4], /^250 /, 'inbound 250 again');
    received.add('Inbound after');
    await waitFor('/ready ok', async () => (await call(svc.baseUrl, 'GET', '/ready')).status === 200, 30_000);
    t.equal(svc.proc.exitCode, null, 'the same process, never restarted');
  });

  t.test('the database is whole and every 200/250 is kept', (t) => intact(t, rig, sent, received));
}

async function intact(t: Test, rig: Rig, sent: Map<string, string>, received: Set<string>): Promise<void> {
  t.equal(readonly(rig.dataDir, (db) => String(db.pragma('integrity_check', { simple: true }))), 'ok', 'PRAGMA integrity_check');
  for (const [label, id] of sent) t.equal((await call(rig.svc.baseUrl, 'GET', `/emails/${id}`, { token: rig.token })).status, 200, `email ${label} is there`);
  // …and reaches the MX, the ones queued while the disk was full included.
  const ids = [...sent.values()];
  const messageIds = readonly(rig.dataDir, (db) => db.prepare(`select message_id from emails where id in (${ids.map(() => '?').join(',')})`).pluck().all(...ids) as string[]);
  t.equal(messageIds.length, sent.size, 'every email answered 200 is a row');
  const notAtMx = () => messageIds.filter((m) => !rig.mx.accepted().has(m));
  await waitFor('every email at the MX', async () => notAtMx().length === 0, 30_000).catch(() => undefined);
  t.same(notAtMx(), [], `all ${messageIds.length} emails answered 200 reached the MX`);
  const list = (await call(rig.svc.baseUrl, 'GET', '/emails/receiving?limit=100', { token: rig.token })).body.data as { subject: string }[];
  const subjects = new Set(list.map((m) => m.subject));
  t.same([...received].filter((s) => !subjects.has(s)), [], `all ${received.size} messages answered 250 are kept`);
  // The spool holds no half-written file of a refused message.
  const spool = spawnSync('find', [join(rig.dataDir, 'spool'), '-type', 'f'], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean);
  t.equal(spool.length, received.size, `spool files (${spool.length}) are the kept messages (${received.size})`);
}

/** A read-only look at svc's database while svc runs (WAL: readers do not block it). */
function readonly<T>(dataDir: string, look: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(join(dataDir, 'svc.sqlite'), { readonly: true });
  try {
    return look(db);
  } finally {
    db.close();
  }
}

/** Writes zeros until the file system says ENOSPC; answers the bytes written. */
function fill(path: string): number {
  const fd = openSync(path, 'w');
  let total = 0;
  try {
    for (const size of [1 << 20, 1 << 12, 1]) {
      const chunk = Buffer.alloc(size);
      for (;;) {
        try {
          total += writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return total;
}
