import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventWithin, withDeadline } from '../helpers/deadline.js';
import { startDnsServer } from '../helpers/dns-server.js';
import { spawnSvc, type SvcProcess } from '../helpers/faults-svc.js';
import { call } from '../helpers/http.js';
import { publish, regionHosts, type WireRecord } from '../helpers/domain-fixtures.js';
import { rawSmtp } from '../helpers/raw-smtp.js';

// SIGTERM of `bin/svc start` (every role) with work in flight: an HTTP request whose body is still
// arriving, an SMTP transaction in the middle of its DATA, and an idle SMTP session. The listeners
// stop taking new connections (a new SMTP client hears 421 while open sessions drain), the in-flight
// request and message complete (and are kept), the idle session hears 421, and the process exits
// 0 within 30 s. A second SIGTERM run leaves an
// SMTP client connected that says nothing at all: the exit still comes within 30 s, with 0.
const dataDir = mkdtempSync(join(tmpdir(), 'svc-sigterm-'));
const dns = await startDnsServer();
t.teardown(async () => { await dns.stop(); rmSync(dataDir, { recursive: true, force: true }); });
const env = {
  SVC_DNS_SERVERS: dns.address, SVC_DNS_TIMEOUT_MS: '1000', SVC_MAIL_HOSTNAME: 'mta.svc-host.net', SVC_REGIONS: JSON.stringify(regionHosts),
  SVC_RATE_LIMIT_BURST: '1000', SVC_RATE_LIMIT_PER_SECOND: '1000', SVC_DOMAINS_RECHECK_CRON: '0 0 1 1 *',
};
const started: SvcProcess[] = [];
t.teardown(() => { for (const s of started) s.proc.kill('SIGKILL'); });
async function start(): Promise<SvcProcess> {
  const svc = await spawnSvc({ dataDir, env });
  started.push(svc);
  await svc.ready();
  return svc;
}

/** What a new TCP client sees: `refused`, or the first line the server sends. */
function firstLine(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(5000);
    socket.once('data', (d) => { socket.destroy(); resolve(d.toString().split('\r\n')[0]!); });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED' ? 'refused' : `error ${e.code}`));
    socket.once('timeout', () => { socket.destroy(); resolve('silent'); });
    socket.once('close', () => resolve('closed'));
  });
}

/** A new HTTP connection (no pooled socket): the status, or `refused`. */
function newHttp(port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: 5000 }, (res) => { res.resume(); resolve(String(res.statusCode)); });
    req.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED' ? 'refused' : `error ${e.code}`));
    req.once('timeout', () => { req.destroy(); resolve('silent'); });
    req.end();
  });
}

/** Starts a POST whose body is only half sent; `finish()` sends the rest and answers the reply. */
function halfPost(port: number, token: string, path: string, body: unknown) {
  const text = Buffer.from(JSON.stringify(body));
  const req = request({
    host: '127.0.0.1', port, path, method: 'POST', agent: false,
    headers: { 'content-type': 'application/json', 'content-length': text.length, authorization: `Bearer ${token}`, 'user-agent': 'svc-tests/1.0' },
  });
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.once('response', (res) => {
      let data = '';
      res.on('data', (c: Buffer) => { data += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : undefined }));
    });
    req.once('error', reject);
  });
  req.write(text.subarray(0, 10));
  return { finish: async () => { req.end(text.subarray(10)); return withDeadline(`the answer to the half-sent POST ${path}`, answer); } };
}

const first = await start();
const team = await first.newTeam('Term');
const created = await call(first.baseUrl, 'POST', '/domains', { token: team.token, body: { name: 'term-inbox.net', capabilities: { receiving: 'enabled' } } });
for (const r of created.body.records as WireRecord[]) publish(dns, 'term-inbox.net', r);
const verified = await call(first.baseUrl, 'POST', `/domains/${created.body.id}/verify`, { token: team.token });
if (verified.body.status !== 'verified') throw new Error(`domain: ${JSON.stringify(verified.body)}`);

t.test('SIGTERM with work in flight: listeners close, in-flight work completes, exit 0', async (t) => {
  const idle = await rawSmtp(first.smtpPort);
  t.match(await idle.command('EHLO idle.example'), /^250/);
  const busy = await rawSmtp(first.smtpPort);
  await busy.command('EHLO busy.example');
  await busy.command('MAIL FROM:<far@far.example>');
  t.match(await busy.command('RCPT TO:<desk@term-inbox.net>'), /^250/);
  t.match(await busy.command('DATA'), /^354/);
  await busy.replies('From: far@far.example\r\nTo: desk@term-inbox.net\r\nSubject: In flight at SIGTERM\r\n\r\nFirst half\r\n', 0);
  const post = halfPost(first.httpPort, team.token, '/suppressions', { email: 'in-flight@far.example' });
  await sleep(300);

  const stopAt = performance.now();
  first.proc.kill('SIGTERM');
  // Both listeners close together; wait (boundedly) for the process to act on the signal. A reset
  // is a connection that sat in the SMTP listener's backlog as it closed: try again.
  let newSmtp = await firstLine(first.smtpPort);
  for (let i = 0; i < 100 && (newSmtp.startsWith('220') || newSmtp === 'error ECONNRESET' || newSmtp === 'refused'); i++) {
    await sleep(100);
    newSmtp = await firstLine(first.smtpPort);
  }
  const newHttpAnswer = await newHttp(first.httpPort);
  // The message in DATA keeps the drain open, so a new session meanwhile hears 421 (RFC 5321 §3.8).
  t.match(newSmtp, /^421 4\.3\.2 /, 'a new SMTP session hears 421 while open sessions drain');
  t.equal(newHttpAnswer, 'refused', 'a new HTTP connection is refused');
  t.match(await idle.command('NOOP'), /^421/, 'the idle session hears 421');
  const posted = await post.finish();
  t.equal(posted.status, 201, `the in-flight request completes (${JSON.stringify(posted.body)})`);
  const dataReply = await busy.sendRaw('Second half\r\n.\r\n');
  t.match(dataReply, /^250/, 'the message in flight is taken');
  busy.close();
  idle.close();
  const exit = await withDeadline('svc to exit after SIGTERM', first.exited, 60_000);
  const seconds = (performance.now() - stopAt) / 1000;
  t.equal(exit.code, 0, `exit code 0 (${first.output().stderr.trim().slice(-300)})`);
  t.ok(seconds < 30, `gone ${seconds.toFixed(1)} s after SIGTERM`);
  t.match(first.output().stdout, /"msg":"stopping"/);
  t.match(first.output().stdout, /"msg":"svc stopped"/);

  const again = await start();
  const received = (await call(again.baseUrl, 'GET', '/emails/receiving', { token: team.token })).body.data;
  t.ok(received.some((m: { subject: string }) => m.subject === 'In flight at SIGTERM'), 'the message is kept');
  t.equal((await call(again.baseUrl, 'GET', '/suppressions/in-flight@far.example', { token: team.token })).status, 200, 'the request\'s work is kept');
  again.proc.kill('SIGTERM');
  t.equal((await withDeadline('the restarted svc to exit after SIGTERM', again.exited, 60_000)).code, 0);
});

t.test('SIGTERM with an SMTP client that never says anything: still exit 0 within 30 s', async (t) => {
  const svc = await start();
  const silent = connect(svc.smtpPort, '127.0.0.1');
  await eventWithin('the greeting to the silent SMTP client', silent, 'data');
  silent.on('error', () => undefined);
  const stopAt = performance.now();
  svc.proc.kill('SIGTERM');
  const exit = await withDeadline('svc to exit after SIGTERM with a silent client', svc.exited, 60_000);
  const seconds = (performance.now() - stopAt) / 1000;
  silent.destroy();
  t.equal(exit.code, 0, `exit code 0 (${svc.output().stdout.split('\n').filter((l) => /stop|took/.test(l)).join(' | ').slice(0, 400)})`);
  t.ok(seconds < 30, `gone ${seconds.toFixed(1)} s after SIGTERM`);
});
