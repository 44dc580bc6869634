// Postfix as the reference of the sending benches (send-throughput, broadcast): Debian's postfix
// package installed when missing (the benches run as root), its `smtp-sink` as the loopback MX both
// sides deliver to, and a private postfix instance fed by `smtp-source` relaying the same number of
// 4 KB messages to that sink.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, chmodSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/helpers/ports.js';
import { procCpuSeconds } from '../test/helpers/proc-cpu.js';

export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await sleep(20);
  }
  return false;
}

export function ensurePostfix(): void {
  if (existsSync('/usr/sbin/smtp-sink') && existsSync('/usr/sbin/postfix')) return;
  console.log('installing Debian postfix (smtp-sink, smtp-source) …');
  execFileSync('sh', ['-c', 'echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postfix'], { stdio: 'inherit' });
}

export function startSink(port: number): ChildProcess {
  return spawn('/usr/sbin/smtp-sink', ['-u', 'postfix', `127.0.0.1:${port}`, '1024'], { stdio: 'ignore' });
}

export interface PostfixFigures { acceptPerSec: number; endToEndPerSec: number; seconds: number }

/** A private postfix instance relaying everything to the sink; smtp-source feeds it. */
export async function runPostfix(sinkPort: number, dir: string, load: { messages: number; sessions: number }): Promise<PostfixFigures> {
  const { messages: MESSAGES, sessions: SESSIONS } = load;
  const etc = join(dir, 'etc');
  const spool = join(dir, 'spool');
  const data = join(dir, 'data');
  const log = join(dir, 'maillog');
  for (const d of [etc, spool, data]) mkdirSync(d, { recursive: true });
  chmodSync(dir, 0o755);
  chownSync(data, Number(execFileSync('id', ['-u', 'postfix']).toString()), 0);
  const port = await freePort();
  const master = readFileSync('/etc/postfix/master.cf', 'utf8').replace(/^smtp\s+inet\s.*$/m, `127.0.0.1:${port} inet n - n - - smtpd`);
  writeFileSync(join(etc, 'master.cf'), master);
  copyFileSync('/etc/postfix/dynamicmaps.cf', join(etc, 'dynamicmaps.cf'));
  writeFileSync(join(etc, 'main.cf'), [
    'compatibility_level = 3.6', `queue_directory = ${spool}`, `data_directory = ${data}`, 'meta_directory = /etc/postfix',
    'mail_owner = postfix', 'setgid_group = postdrop', 'inet_interfaces = 127.0.0.1', 'inet_protocols = ipv4',
    'myhostname = pfbench.localdomain', 'mydestination =', `relayhost = [127.0.0.1]:${sinkPort}`, 'mynetworks = 127.0.0.0/8',
    `maillog_file = ${log}`, `maillog_file_prefixes = ${dir}`, 'smtp_tls_security_level = none', 'smtpd_tls_security_level = none',
    `default_destination_concurrency_limit = ${SESSIONS}`, 'smtpd_relay_restrictions = permit_mynetworks, reject',
    'alias_maps =', 'alias_database =', 'local_recipient_maps =', '',
  ].join('\n'));
  execFileSync('/usr/sbin/postfix', ['-c', etc, 'start'], { stdio: 'ignore' });
  try {
    await waitUntil(() => existsSync(log) && readFileSync(log, 'utf8').includes('daemon started'), 10_000);
    const started = performance.now();
    execFileSync('/usr/sbin/smtp-source', ['-s', String(SESSIONS), '-l', '4096', '-m', String(MESSAGES), '-f', 'bench@pfbench.test', '-t', 'sink@sink.test', `127.0.0.1:${port}`]);
    const accepted = (performance.now() - started) / 1000;
    const sent = sentCounter(log);
    await waitUntil(() => sent() >= MESSAGES, 600_000);
    const total = (performance.now() - started) / 1000;
    return { acceptPerSec: MESSAGES / accepted, endToEndPerSec: sent() / total, seconds: total };
  } finally {
    execFileSync('/usr/sbin/postfix', ['-c', etc, 'stop'], { stdio: 'ignore' });
  }
}

/** Counts `status=sent` lines in postfix's log, reading only what was added since the last call (the log of 100,000 messages is tens of MB). */
function sentCounter(log: string): () => number {
  let offset = 0;
  let count = 0;
  let tail = '';
  return () => {
    const size = statSync(log).size;
    if (size <= offset) return count;
    const fd = openSync(log, 'r');
    try {
      const chunk = Buffer.alloc(size - offset);
      readSync(fd, chunk, 0, chunk.length, offset);
      offset = size;
      const lines = (tail + chunk.toString('utf8')).split('\n');
      tail = lines.pop() ?? '';
      for (const line of lines) if (line.includes('status=sent')) count += 1;
    } finally {
      closeSync(fd);
    }
    return count;
  };
}

/**
 * CPU seconds (user + system) a child process has used so far, from /proc; with `mainThread`,
 * only its main thread's (the event loop, without the GC, checkpoint and pool threads).
 */
export function childCpuSeconds(pid: number | undefined, mainThread = false): number {
  if (pid === undefined) return 0;
  return procCpuSeconds(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`).own;
}

