import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDeadline } from './deadline.js';
import { spawnSvc, type SvcProcess } from './faults-svc.js';
import { call } from './http.js';
import { startTestRedis } from './redis.js';
import { verifyDomainThroughApi } from './sending.js';
import { mailZone } from './email-fixtures.js';
import { publish, regionHosts, type WireRecord } from './domain-fixtures.js';
import { rawSmtp } from './raw-smtp.js';

// The proof that every 200 from POST /emails and every 250 after DATA comes after an fsync: svc
// runs under strace (-f: every thread; -yy: each fd with its file path or TCP endpoints), a client
// sends emails and SMTP messages, and the trace is read back. For each such reply on a connection,
// some fsync/fdatasync of the right file must have started after the request's last read on that
// connection and ended before the reply's write: the database (its WAL) before a 200, the
// database and the spool (the raw file or its folder) before a 250. Group commit is fine: one
// fsync may cover several replies. Run under eatmydata (fsync a no-op), the same check must fail.

export type FsyncTarget = 'database' | 'spool' | 'other';

export interface FsyncViolation {
  reply: 'http 200' | 'smtp 250';
  connection: string;
  /** Seconds (epoch) of the request's last read and of the reply's write. */
  lastReadAt: number;
  replyAt: number;
  /** What no fsync covered in that window. */
  missing: FsyncTarget[];
}

export interface FsyncReport {
  /** Replies checked: 200s to POST /emails and 250s after DATA. */
  http: number;
  smtp: number;
  /** fsync/fdatasync calls that succeeded, by target. */
  fsyncs: Record<FsyncTarget, number>;
  violations: FsyncViolation[];
}

interface Call {
  pid: string;
  name: string;
  entry: number;
  exit: number;
  args: string;
  result: number;
}

/** strace -f -ttt -T -yy output → completed calls (unfinished/resumed pairs joined), in entry order. */
export function parseStrace(trace: string): Call[] {
  const calls: Call[] = [];
  const pending = new Map<string, { name: string; entry: number; head: string }>();
  for (const line of trace.split('\n')) {
    const m = /^(\d+)\s+(\d+\.\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, pid, ts, rest] = m as unknown as [string, string, string, string];
    const entry = Number(ts);
    const unfinished = /^(\w+)\((.*) <unfinished \.\.\.>$/.exec(rest);
    if (unfinished) {
      pending.set(pid, { name: unfinished[1]!, entry, head: unfinished[2]! });
      continue;
    }
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(rest);
    let name: string;
    let body: string;
    let start = entry;
    if (resumed) {
      const open = pending.get(pid);
      if (!open || open.name !== resumed[1]) continue;
      pending.delete(pid);
      name = open.name;
      body = open.head + resumed[2]!;
      start = open.entry;
    } else {
      const whole = /^(\w+)\((.*)$/.exec(rest);
      if (!whole) continue; // signals, exits
      name = whole[1]!;
      body = whole[2]!;
    }
    const end = body.lastIndexOf(') = ');
    if (end < 0) continue;
    const result = Number.parseInt(body.slice(end + 4), 10);
    const duration = Number(/<(\d+\.\d+)>\s*$/.exec(body)?.[1] ?? 0);
    calls.push({ pid, name, entry: start, exit: start + duration, args: body.slice(0, end), result });
  }
  return calls.sort((a, b) => a.entry - b.entry);
}

const reads = new Set(['read', 'recvfrom', 'recvmsg']);
const writes = new Set(['write', 'writev', 'sendto', 'sendmsg']);
const syncs = new Set(['fsync', 'fdatasync']);

/** The fd's decoded name (`TCP:[a->b]`, a path), or undefined for a bare fd. */
const fdName = (args: string): string | undefined => /^\d+<(.*?)>(?:,|$)/.exec(args)?.[1];
const firstString = (args: string): string => /"((?:[^"\\]|\\.)*)"/.exec(args)?.[1] ?? '';

export function targetOf(path: string, dataDir: string): FsyncTarget {
  if (!path.startsWith(dataDir)) return 'other';
  const inside = path.slice(dataDir.length);
  if (/^\/svc\.sqlite(-wal|-journal)?$/.test(inside)) return 'database';
  if (/^\/spool(\/|$)/.test(inside)) return 'spool';
  return 'other';
}

interface Connection {
  lastReadExit: number;
  /** A POST /emails request has been read and not answered yet. */
  sendPending: boolean;
  /** 354 was sent: the next reply is the one to the message. */
  inData: boolean;
}

/** Checks every 200 to POST /emails and every 250 after DATA in a trace of svc (data folder `dataDir`). */
export function checkFsyncBeforeReplies(trace: string, dataDir: string): FsyncReport {
  const calls = parseStrace(trace);
  const fsyncList = calls.filter((c) => syncs.has(c.name) && c.result === 0).map((c) => ({ ...c, target: targetOf(fdName(c.args) ?? '', dataDir) }));
  const report: FsyncReport = { http: 0, smtp: 0, fsyncs: { database: 0, spool: 0, other: 0 }, violations: [] };
  for (const f of fsyncList) report.fsyncs[f.target]++;
  const connections = new Map<string, Connection>();
  const check = (reply: FsyncViolation['reply'], connection: string, conn: Connection, at: number, needed: FsyncTarget[]) => {
    const missing = needed.filter((target) => !fsyncList.some((f) => f.target === target && f.entry >= conn.lastReadExit && f.exit <= at));
    if (missing.length) report.violations.push({ reply, connection, lastReadAt: conn.lastReadExit, replyAt: at, missing });
  };
  for (const c of calls) {
    if (!reads.has(c.name) && !writes.has(c.name)) continue;
    const name = fdName(c.args);
    if (!name?.startsWith('TCP')) continue;
    const conn = connections.get(name) ?? { lastReadExit: 0, sendPending: false, inData: false };
    connections.set(name, conn);
    const text = firstString(c.args);
    if (reads.has(c.name)) {
      if (c.result <= 0) continue;
      conn.lastReadExit = c.exit;
      if (/^POST \/emails[ ?]/.test(text)) conn.sendPending = true;
      continue;
    }
    if (conn.sendPending && text.startsWith('HTTP/1.1 ')) {
      conn.sendPending = false;
      if (text.startsWith('HTTP/1.1 200 ')) {
        report.http++;
        check('http 200', name, conn, c.entry, ['database']);
      }
    } else if (text.startsWith('354 ')) {
      conn.inData = true;
    } else if (conn.inData && /^\d{3}[ -]/.test(text)) {
      conn.inData = false;
      if (text.startsWith('250')) {
        report.smtp++;
        check('smtp 250', name, conn, c.entry, ['database', 'spool']);
      }
    }
  }
  return report;
}

/** Why the probe cannot run here (strace missing or ptrace refused), or undefined when it can. */
export function probeUnavailable(options: { eatmydata?: boolean } = {}): string | undefined {
  const strace = spawnSync('strace', ['-f', '-o', '/dev/null', 'true'], { encoding: 'utf8' });
  if (strace.error || strace.status !== 0) return `strace cannot trace here: ${strace.error?.message ?? strace.stderr.trim().split('\n')[0]}`;
  if (options.eatmydata) {
    const eat = spawnSync('eatmydata', ['true'], { encoding: 'utf8' });
    if (eat.error || eat.status !== 0) return `eatmydata is not installed (scripts/setup.sh installs it): ${eat.error?.message ?? eat.stderr.trim()}`;
  }
  return undefined;
}

export interface FsyncProbeOptions {
  sends: number;
  receives: number;
  /** Run svc under eatmydata: fsync becomes a no-op, and the check must find violations. */
  eatmydata?: boolean;
  /** Requests in flight at once (group commit then covers several replies with one fsync). */
  concurrency?: number;
  /** More settings for svc (e.g. SVC_SQLITE_SYNCHRONOUS=NORMAL, which the check must catch too). */
  env?: Record<string, string>;
}

export interface FsyncProbeResult extends FsyncReport {
  /** What the clients were answered: 200s and 250s seen, and anything else. */
  answered: { http200: number; smtp250: number; other: string[] };
}

/**
 * Starts svc (api and inbound roles) under strace, sends `sends` emails and `receives` inbound
 * messages, stops it with SIGTERM and checks the trace.
 */
export async function runFsyncProbe(options: FsyncProbeOptions): Promise<FsyncProbeResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-fsync-'));
  const traceFile = join(dataDir, 'strace.txt');
  const redis = await startTestRedis();
  const dns = await mailZone(['inbox-one.net']);
  let svc: SvcProcess | undefined;
  try {
    const strace = ['strace', '-f', '-ttt', '-T', '-yy', '-s', '64', '-o', traceFile, '-e', 'trace=fsync,fdatasync,read,recvfrom,recvmsg,write,writev,sendto,sendmsg'];
    svc = await spawnSvc({
      dataDir, roles: 'api,inbound', wrap: options.eatmydata ? [...strace, 'eatmydata'] : strace,
      env: {
        SVC_REDIS_URL: redis.url, SVC_DNS_SERVERS: dns.address, SVC_DNS_TIMEOUT_MS: '1000', SVC_MAIL_HOSTNAME: 'mta.svc-host.net',
        SVC_REGIONS: JSON.stringify(regionHosts), SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000',
        SVC_DOMAINS_RECHECK_CRON: '0 0 1 1 *', SVC_LOG_LEVEL: 'warn',
        // Request-log batches commit (and fsync) too: flushed rarely, they cannot stand in for a send's own fsync.
        SVC_LOGS_FLUSH_MS: '10000',
        ...options.env,
      },
    });
    await svc.ready(90_000);
    const answered = await drive(svc, dns, options);
    await stop(svc);
    // strace -yy prints resolved paths: compare with the folder's real path (tmpdir may be a link).
    return { ...checkFsyncBeforeReplies(readFileSync(traceFile, 'utf8'), realpathSync(dataDir)), answered };
  } finally {
    if (svc) await stop(svc).catch(() => undefined);
    await redis.stop();
    await dns.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function drive(svc: SvcProcess, dns: Awaited<ReturnType<typeof mailZone>>, options: FsyncProbeOptions): Promise<FsyncProbeResult['answered']> {
  const team = await svc.newTeam('Fsync');
  await verifyDomainThroughApi(svc.baseUrl, team.token, dns, 'fsync-sender.net');
  const inbox = await call(svc.baseUrl, 'POST', '/domains', { token: team.token, body: { name: 'fsync-inbox.net', capabilities: { receiving: 'enabled' } } });
  for (const r of inbox.body.records as WireRecord[]) publish(dns, 'fsync-inbox.net', r);
  if ((await call(svc.baseUrl, 'POST', `/domains/${inbox.body.id}/verify`, { token: team.token })).body.status !== 'verified') throw new Error('fsync probe: receiving domain did not verify');
  const answered = { http200: 0, smtp250: 0, other: [] as string[] };
  const send = async (n: number) => {
    const r = await call(svc.baseUrl, 'POST', '/emails', { token: team.token, body: { from: 'Probe <p@fsync-sender.net>', to: `r${n}@inbox-one.net`, subject: `Probe ${n}`, text: `Message ${n}` } });
    if (r.status === 200) answered.http200++;
    else answered.other.push(`POST /emails ${r.status}`);
  };
  const receive = async (n: number) => {
    const s = await rawSmtp(svc.smtpPort);
    try {
      for (const line of ['EHLO far.example', 'MAIL FROM:<far@far.example>', 'RCPT TO:<desk@fsync-inbox.net>', 'DATA']) await s.command(line);
      const reply = await s.sendRaw(`From: far@far.example\r\nTo: desk@fsync-inbox.net\r\nSubject: Probe ${n}\r\n\r\nBody ${n}\r\n.\r\n`);
      if (reply.startsWith('250')) answered.smtp250++;
      else answered.other.push(`DATA ${reply}`);
      await s.command('QUIT');
    } finally {
      s.close();
    }
  };
  const concurrency = options.concurrency ?? 4;
  await Promise.all([pool(options.sends, concurrency, send), pool(options.receives, concurrency, receive)]);
  return answered;
}

async function pool(count: number, width: number, work: (n: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) await work(next++);
  }));
}

/** SIGTERM to svc itself (strace's child), then waits for strace to finish writing the trace. */
async function stop(svc: SvcProcess): Promise<void> {
  if (svc.proc.exitCode !== null || svc.proc.signalCode !== null) return;
  const stracePid = svc.proc.pid!;
  const children = readFileSync(`/proc/${stracePid}/task/${stracePid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  for (const pid of children) process.kill(pid, 'SIGTERM');
  const exited = await withDeadline('svc to exit after SIGTERM', svc.exited, 30_000).then(() => true, () => false);
  if (!exited) {
    for (const pid of children) process.kill(pid, 'SIGKILL');
    await withDeadline('strace to exit after svc got SIGKILL', svc.exited, 30_000);
  }
}
