import t from 'tap';
import { createServer, type Server } from 'node:net';
import { adminCall } from '../../bin/admin-client.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { runSvcCommand } from '../helpers/svc-command.js';
import { startDnsServer } from '../helpers/dns-server.js';
import { freePort } from '../helpers/ports.js';

// `svc admin check dns` and `svc admin send-test` as an operator types them (the real executable
// against a running appliance's admin socket), and the admin socket's answers under them. The
// appliance's DNS is a loopback zone server; the port 25 check connects to a loopback listener.
t.setTimeout(120_000);
const HOST = 'mta.svc-test.net';
const ADDRESS = '93.184.215.14';
const PTR = '14.215.184.93.in-addr.arpa';
const dns = await startDnsServer({
  [HOST]: [{ type: 'A', value: ADDRESS }, { type: 'TXT', value: `v=spf1 ip4:${ADDRESS} -all` }],
  [PTR]: [{ type: 'PTR', value: HOST }],
  'other.example.net': [{ type: 'A', value: ADDRESS }],
});
// The probe closes at once: a reset while the greeting goes out is expected.
const listener: Server = createServer((socket) => { socket.on('error', () => undefined); socket.end('220 test ESMTP\r\n'); });
await new Promise<void>((done) => listener.listen(0, '127.0.0.1', () => done()));
const open25 = `127.0.0.1:${(listener.address() as { port: number }).port}`;
const closed25 = `127.0.0.1:${await freePort()}`;
const app = await startTestAppliance({ roles: ['api', 'outbound'], env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_TIMEOUT_MS: '500' } });
t.teardown(async () => { await app.stop(); await dns.stop(); await new Promise((done) => listener.close(done)); });
const team = await app.newTeam('Checks');
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_DATA_DIR: app.config.data_dir,
  SVC_ADMIN_SOCKET: app.adminSocket, SVC_LOG_LEVEL: 'warn', SVC_MAIL_HOSTNAME: 'mx.cli-test.net',
};

/** One `svc …` run to its end, killed after 30 s. */
const svc = (...args: string[]) => runSvcCommand(args, env, 30_000);

t.test('check dns: every check passes on a well-set zone; exit 0', async (t) => {
  const run = await svc('admin', 'check', 'dns', '--port25-target', open25);
  t.equal(run.code, 0, run.stdout + run.stderr);
  t.match(run.stdout, new RegExp(`^PASS  forward  ${HOST} resolves to ${ADDRESS}$`, 'm'));
  t.match(run.stdout, new RegExp(`^PASS  reverse  PTR ${ADDRESS} → ${HOST}, which resolves back to it \\(forward-confirmed\\)$`, 'm'));
  t.match(run.stdout, new RegExp(`^PASS  spf      "v=spf1 ip4:${ADDRESS} -all" at ${HOST} authorizes ${ADDRESS}$`, 'm'));
  t.match(run.stdout, new RegExp(`^PASS  inbound  ${HOST}, the MX target of receiving domains, resolves here`, 'm'));
  t.match(run.stdout, new RegExp(`^PASS  port25   connected to ${open25} \\(127\\.0\\.0\\.1\\) in \\d+ ms`, 'm'));
  t.match(run.stdout, new RegExp(`^${HOST}: 5 passed, 0 warned, 0 failed$`, 'm'));
});

t.test('check dns: a wrong PTR, an SPF that leaves the address out and a closed port 25 fail; exit 1; --json', async (t) => {
  dns.set(PTR, [{ type: 'PTR', value: 'host-93-184.provider.example' }]);
  dns.set(HOST, [{ type: 'A', value: ADDRESS }, { type: 'TXT', value: 'v=spf1 ip4:192.0.2.10 -all' }]);
  t.teardown(() => {
    dns.set(PTR, [{ type: 'PTR', value: HOST }]);
    dns.set(HOST, [{ type: 'A', value: ADDRESS }, { type: 'TXT', value: `v=spf1 ip4:${ADDRESS} -all` }]);
  });
  const [run, asJson] = await Promise.all([
    svc('admin', 'check', 'dns', '--port25-target', closed25, '--timeout', '2s'),
    svc('admin', 'check', 'dns', '--port25-target', closed25, '--json'),
  ]);
  t.equal(run.code, 1, run.stderr);
  t.match(run.stdout, new RegExp(`^FAIL  reverse  PTR ${ADDRESS} → host-93-184\\.provider\\.example, which does not resolve back to ${ADDRESS}: set the PTR to ${HOST}$`, 'm'));
  t.match(run.stdout, new RegExp(`^FAIL  spf      "v=spf1 ip4:192\\.0\\.2\\.10 -all" at ${HOST} gives fail for ${ADDRESS} \\(every customer's MAIL FROM record points here\\): make it authorize them, like "v=spf1 ip4:${ADDRESS} -all"$`, 'm'));
  t.match(run.stdout, /^FAIL {2}port25 {3}no connection to 127\.0\.0\.1:\d+: 127\.0\.0\.1 port \d+: ECONNREFUSED; mail cannot leave/m);
  t.match(run.stdout, /: 2 passed, 0 warned, 3 failed$/m);
  t.equal(asJson.code, 1);
  const report = JSON.parse(asJson.stdout);
  t.match(report, { object: 'dns_check', mail_hostname: HOST, addresses: [ADDRESS], ok: false });
  t.same(report.checks.map((c: { check: string; status: string }) => `${c.check} ${c.status}`),
    ['forward pass', 'reverse fail', 'spf fail', 'inbound pass', 'port25 fail']);
});

t.test('check dns: a PTR naming another host that resolves back warns; no SPF, no A record fail', async (t) => {
  dns.set(PTR, [{ type: 'PTR', value: 'other.example.net' }]);
  let answer = await adminCall(app.adminSocket, 'POST', '/admin/check/dns', { port25_target: open25 });
  t.equal(answer.status, 200);
  let report = answer.body as { ok: boolean; checks: { check: string; status: string; reason: string }[] };
  t.equal(report.ok, true, 'a warning is not a failure');
  t.match(report.checks.find((c) => c.check === 'reverse'), {
    status: 'warn', reason: `PTR ${ADDRESS} → other.example.net (forward-confirmed), not ${HOST}: set it to ${HOST}, svc's EHLO name, so the two agree`,
  });
  dns.set(HOST, [{ type: 'AAAA', value: '::1' }]);
  t.teardown(() => {
    dns.set(PTR, [{ type: 'PTR', value: HOST }]);
    dns.set(HOST, [{ type: 'A', value: ADDRESS }, { type: 'TXT', value: `v=spf1 ip4:${ADDRESS} -all` }]);
  });
  answer = await adminCall(app.adminSocket, 'POST', '/admin/check/dns', { port25_target: open25 });
  report = answer.body as typeof report;
  t.equal(report.ok, false);
  t.match(report.checks.find((c) => c.check === 'forward'), { status: 'warn', reason: /::1 is not a public address: other mail servers cannot reach it/ });
  t.match(report.checks.find((c) => c.check === 'spf'), { status: 'fail', reason: `${HOST} has no SPF record (every customer's MAIL FROM record points here): publish TXT "v=spf1 ip6:::1 -all"` });
  dns.remove(HOST);
  answer = await adminCall(app.adminSocket, 'POST', '/admin/check/dns', { port25_target: open25 });
  report = answer.body as typeof report;
  t.match(report.checks[0], { check: 'forward', status: 'fail', reason: `${HOST} has no A or AAAA record: publish this machine's public address under mail_hostname` });
  const bad = await adminCall(app.adminSocket, 'POST', '/admin/check/dns', { timeout_ms: 5 });
  t.equal(bad.status, 422);
  t.match(bad.body, { name: 'invalid_parameter' });
});

t.test('send-test: to the mailbox simulator from the onboarding sender, followed until delivered; exit 0', async (t) => {
  const run = await svc('admin', 'send-test', '--team', 'Checks', '--to', 'delivered@simulator.svc.invalid');
  t.equal(run.code, 0, run.stdout + run.stderr);
  const id = /^email ([0-9a-f-]{36}) accepted: from svc test <onboarding@simulator\.svc\.invalid> to delivered@simulator\.svc\.invalid \(team [0-9a-f-]+\)$/m.exec(run.stdout)?.[1];
  t.ok(id, run.stdout);
  t.match(run.stdout, /^ {2}\S+ {2}delivered {2}delivered@simulator\.svc\.invalid {2}#1 /m);
  t.match(run.stdout, /^delivered@simulator\.svc\.invalid: delivered \(250 2\.0\.0 delivered \(mailbox simulator\)\)$/m);
  const email = await adminCall(app.adminSocket, 'GET', `/admin/queue/${id}`);
  t.match(email.body, { team_id: team.teamId, recipients: [{ state: 'delivered' }] }, 'the ordinary send path: the team\'s own email');
});

t.test('send-test: a bounce exits 1; --json; a recipient outside the simulator is refused saying why', async (t) => {
  const [bounced, asJson, refused] = await Promise.all([
    svc('admin', 'send-test', '--team', team.teamId, '--to', 'bounced@simulator.svc.invalid'),
    svc('admin', 'send-test', '--team', 'Checks', '--to', 'delivered@simulator.svc.invalid', '--json'),
    svc('admin', 'send-test', '--team', 'Checks', '--to', 'you@example.com'),
  ]);
  t.equal(bounced.code, 1, bounced.stderr);
  t.match(bounced.stdout, /^bounced@simulator\.svc\.invalid: bounced \(550 5\.1\.1 /m);
  t.equal(asJson.code, 0, asJson.stderr);
  t.match(JSON.parse(asJson.stdout), { object: 'test_send', followed: true, email: { recipients: [{ state: 'delivered' }] } });
  t.equal(refused.code, 1);
  t.match(refused.stdout, /^error: validation_error: The onboarding sender onboarding@simulator\.svc\.invalid may send only to the mailbox simulator/);
  const unverified = await svc('admin', 'send-test', '--team', 'Checks', '--to', 'delivered@simulator.svc.invalid', '--from', 'hi@unverified.net');
  t.equal(unverified.code, 1);
  t.match(unverified.stdout, /^error: validation_error: The unverified\.net domain is not verified/);
  const noTeam = await svc('admin', 'send-test', '--team', 'Nobody', '--to', 'delivered@simulator.svc.invalid');
  t.equal(noTeam.code, 1);
  t.match(noTeam.stdout, /^error: not_found/);
});

t.test('help and a bad command line', async (t) => {
  const [help, area, missing, badTimeout] = await Promise.all([
    svc('admin', 'check', 'dns', '--help'), svc('admin', 'check'), svc('admin', 'send-test', '--to', 'a@b.example'),
    svc('admin', 'check', 'dns', '--timeout', 'soon'),
  ]);
  t.equal(help.code, 0);
  t.match(help.stdout, /svc admin check dns \[--port25-target HOST\[:PORT\]\] \[--timeout DURATION\] \[--json\]/);
  t.equal(area.code, 2);
  t.match(area.stderr, /^svc admin check: an action is needed; one of dns/);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /--team/);
  t.equal(badTimeout.code, 2);
  t.match(badTimeout.stderr, /--timeout/);
});
