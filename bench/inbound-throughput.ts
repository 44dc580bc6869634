// Inbound SMTP throughput: messages per second accepted *and committed* by svc's listener (the 250
// after DATA comes only after the spool fsync and the SQLite commit), driven by Postfix's
// `smtp-source` (20 sessions, 4 KB messages, connections reused), beside the same load on
// Postfix's own smtpd (a private instance whose 250 means the queue file is fsynced — the same
// durability promise) and on Postfix's `smtp-sink` (accepts and discards: the loopback ceiling).
// Targets alternate round by round on this shared, noisy machine; medians and the svc/Postfix ratio
// are what to read. Also printed: svc's peak RSS and its CPU a message (this process hosts the
// appliance and the DNS server its checks ask; smtp-source runs as a child).
//
// Needs the Debian postfix package (smtp-source, smtp-sink, postfix); run as root without it, this
// script installs it with apt-get. Tuning (environment): BENCH_ROUNDS (3), BENCH_MESSAGES (4000),
// BENCH_SESSIONS (20), BENCH_SIZE (4096), BENCH_CLAMD (unset; 1 adds a round target with a real
// clamd scanning every message), BENCH_SVC_ENV (JSON of extra SVC_* settings for svc).
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InboundRole } from '../bin/roles/inbound.js';
import { startTestAppliance, type TestAppliance } from '../test/helpers/appliance.js';
import { startTestClamd, type TestClamd } from '../test/helpers/clamd.js';
import { startDnsServer } from '../test/helpers/dns-server.js';
import { freePort } from '../test/helpers/ports.js';
import { rerunUnderServiceFlags } from './service-flags.js';
import { intFromEnv } from './settings.js';

const ROUNDS = intFromEnv('BENCH_ROUNDS', 3);
const MESSAGES = intFromEnv('BENCH_MESSAGES', 4000);
const SESSIONS = intFromEnv('BENCH_SESSIONS', 20);
const SIZE = intFromEnv('BENCH_SIZE', 4096);
const DOMAIN = 'bench-inbox.net';

interface Target {
  name: string;
  port: number;
  /** Messages the target has durably taken so far (undefined: it keeps nothing). */
  committed?: () => number;
}

function ensurePostfixTools(): void {
  if (existsSync('/usr/sbin/smtp-source') && existsSync('/usr/sbin/postfix')) return;
  if (process.getuid?.() !== 0) throw new Error('install the postfix package (smtp-source, smtp-sink): apt-get install postfix');
  console.log('installing the postfix package (smtp-source, smtp-sink, smtpd)…');
  execFileSync('bash', ['-c', [
    'echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections',
    'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postfix >/dev/null',
  ].join(' && ')], { stdio: 'inherit' });
}

async function waitForPort(port: number, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not listen on ${port}`);
}

/** A private Postfix instance: queue in a temp folder, smtpd on a loopback port, delivery discarded. */
async function startPostfix(): Promise<{ target: Target; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-postfix-'));
  chmodSync(dir, 0o755); // Postfix's daemons run as the postfix user and must reach the queue.
  const conf = join(dir, 'conf');
  const data = join(dir, 'data');
  for (const d of [conf, data, join(dir, 'queue')]) mkdirSync(d, { recursive: true });
  chownSync(data, Number(execFileSync('id', ['-u', 'postfix']).toString()), Number(execFileSync('id', ['-g', 'postfix']).toString()));
  const port = await freePort();
  writeFileSync(join(conf, 'main.cf'), [
    'compatibility_level = 3.6', `queue_directory = ${join(dir, 'queue')}`, `data_directory = ${data}`,
    'command_directory = /usr/sbin', 'daemon_directory = /usr/lib/postfix/sbin', 'meta_directory = /etc/postfix',
    'shlib_directory = /usr/lib/postfix', 'mail_owner = postfix', 'setgid_group = postdrop', 'inet_interfaces = 127.0.0.1',
    'inet_protocols = ipv4', 'myhostname = postfix.bench.local', `mydestination = ${DOMAIN}`, 'local_transport = discard:',
    'default_transport = discard:', 'mynetworks = 127.0.0.0/8', `maillog_file = ${join(dir, 'maillog')}`, `maillog_file_prefixes = ${dir}`,
    'smtpd_client_connection_count_limit = 0', 'smtpd_client_connection_rate_limit = 0', 'default_process_limit = 100',
    'alias_maps =', 'alias_database =', 'local_recipient_maps =', 'smtpd_peername_lookup = no', 'biff = no', '',
  ].join('\n'));
  const services = [
    `127.0.0.1:${port} inet n - n - - smtpd`, 'pickup unix n - n 60 1 pickup', 'cleanup unix n - n - 0 cleanup',
    'qmgr unix n - n 300 1 qmgr', 'rewrite unix - - n - - trivial-rewrite', 'bounce unix - - n - 0 bounce',
    'defer unix - - n - 0 bounce', 'trace unix - - n - 0 bounce', 'verify unix - - n - 1 verify', 'flush unix n - n 1000? 0 flush',
    'proxymap unix - - n - - proxymap', 'showq unix n - n - - showq', 'error unix - - n - - error', 'retry unix - - n - - error',
    'discard unix - - n - - discard', 'anvil unix - - n - 1 anvil', 'scache unix - - n - 1 scache', 'postlog unix-dgram n - n - 1 postlogd',
  ];
  writeFileSync(join(conf, 'master.cf'), services.join('\n') + '\n');
  const child = spawn('postfix', ['-c', conf, 'start-fg'], { stdio: 'ignore' });
  await waitForPort(port, 'postfix smtpd');
  return {
    target: { name: 'postfix smtpd', port },
    async stop() {
      spawnSync('postfix', ['-c', conf, 'stop'], { stdio: 'ignore' });
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startSink(): Promise<{ target: Target; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn('smtp-sink', ['-u', 'postfix', `127.0.0.1:${port}`, '1000'], { stdio: 'ignore' });
  await waitForPort(port, 'smtp-sink');
  return { target: { name: 'postfix smtp-sink', port }, stop: async () => { child.kill(); } };
}

async function startSvc(name: string, env: Record<string, string>): Promise<{ target: Target; app: TestAppliance; stop(): Promise<void> }> {
  const dns = await startDnsServer();
  const app = await startTestAppliance({
    roles: ['inbound'],
    env: {
      SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: '0', SVC_DNS_SERVERS: dns.address, SVC_MAIL_HOSTNAME: 'svc.bench.local',
      SVC_LOG_LEVEL: 'warn', SVC_SMTP_CONNECTION_RATE_PER_IP: '0', SVC_SMTP_MAX_CONNECTIONS_PER_IP: '1000', ...env,
    },
  });
  const team = await app.newTeam('Bench');
  app.appliance.services.receiving.routing.domains = {
    receivingDomain: async (domain) => (domain === DOMAIN ? { teamId: team.teamId, domainId: 'bench', name: DOMAIN } : undefined),
  };
  const count = app.appliance.services.database.sqlite.prepare('select count(*) as n from received_emails where dropped_reason is null');
  const port = (app.appliance.running.find((r) => r.name === 'inbound') as InboundRole).smtp.port;
  return {
    app,
    target: { name, port, committed: () => (count.get() as { n: number }).n },
    async stop() {
      await app.stop();
      await dns.stop();
    },
  };
}

/**
 * One smtp-source run; answers messages per second (smtp-source exits after the last 250). It runs
 * as an async child: svc is served by this very process, so nothing here may block the event loop.
 */
async function drive(target: Target): Promise<{ rate: number; ok: boolean; cpuUs: number }> {
  const before = target.committed?.();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const child = spawn('smtp-source', [
    '-d', '-s', String(SESSIONS), '-l', String(SIZE), '-m', String(MESSAGES), '-M', 'client.bench.local',
    '-f', 'sender@client.bench.local', '-t', `rcpt@${DOMAIN}`, `127.0.0.1:${target.port}`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`smtp-source against ${target.name} failed: ${stderr}`);
  const committed = target.committed ? target.committed() - before! : MESSAGES;
  const cpu = process.cpuUsage(cpuBefore);
  return { rate: MESSAGES / seconds, ok: committed === MESSAGES, cpuUs: (cpu.user + cpu.system) / MESSAGES };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const peakRssMiB = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;

async function main(): Promise<number> {
  ensurePostfixTools();
  const stops: (() => Promise<void>)[] = [];
  let clamd: TestClamd | undefined;
  try {
    // BENCH_SVC_ENV: extra SVC_* settings as JSON, e.g. '{"SVC_SQLITE_SYNCHRONOUS":"NORMAL"}', to see what a knob costs.
    const svc = await startSvc('svc', JSON.parse(process.env.BENCH_SVC_ENV ?? '{}') as Record<string, string>);
    stops.push(svc.stop);
    const targets: Target[] = [svc.target];
    if (process.env.BENCH_CLAMD) {
      clamd = await startTestClamd();
      const scanned = await startSvc('svc + clamd', { SVC_SCANNER_CLAMD: clamd.socket });
      stops.push(scanned.stop);
      targets.push(scanned.target);
    }
    const postfix = await startPostfix();
    stops.push(postfix.stop);
    const sink = await startSink();
    stops.push(sink.stop);
    targets.push(postfix.target, sink.target);

    console.log(`smtp-source: ${SESSIONS} sessions, ${SIZE}-byte messages, ${MESSAGES} per run, connections reused; ${ROUNDS} rounds\n`);
    const rates = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const cpus = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        const { rate, ok, cpuUs } = await drive(target);
        if (!ok) throw new Error(`${target.name}: not every accepted message was committed`);
        rates.get(target.name)!.push(rate);
        // svc runs in this process: its CPU a message is steadier than the rate on shared cores.
        const cpu = target.committed ? `  process CPU ${cpuUs.toFixed(0)} µs a message` : '';
        if (target.committed) cpus.get(target.name)!.push(cpuUs);
        console.log(`round ${round}  ${target.name.padEnd(18)} ${rate.toFixed(0).padStart(6)} msg/s${cpu}`);
      }
    }
    console.log('\nmedian msg/s accepted (svc: accepted and committed; every 250 counted in SQLite)');
    for (const [name, values] of rates) {
      const cpu = cpus.get(name)!.length ? `   process CPU ${median(cpus.get(name)!).toFixed(0)} µs a message` : '';
      console.log(`  ${name.padEnd(18)} ${median(values).toFixed(0).padStart(6)}${cpu}`);
    }
    const ratio = median(rates.get('svc')!) / median(rates.get('postfix smtpd')!);
    console.log(`\nsvc / postfix smtpd (both fsync before 250): ${ratio.toFixed(2)}`);
    console.log(`svc process peak RSS: ${peakRssMiB().toFixed(0)} MiB`);
    return 0;
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await clamd?.stop();
  }
}

if (!rerunUnderServiceFlags()) main().then((code) => process.exit(code), (err: Error) => {
  console.error(err.message);
  process.exit(1);
});
