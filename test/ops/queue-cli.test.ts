import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { runSvcCommand } from '../helpers/svc-command.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// `svc admin queue …` and `svc admin trace` as an operator types them: the real executable
// (bin/svc → the carried Node → dist/bin/svc.js) against a running appliance's admin socket.
t.setTimeout(120_000);
const dns = await mailZone(['inbox-one.net']);
const app = await startTestAppliance({ env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0' } });
t.teardown(async () => { await app.stop(); await dns.stop(); });
const team = await app.newTeam('Cli Queue');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_DATA_DIR: app.config.data_dir,
  SVC_ADMIN_SOCKET: app.adminSocket, SVC_LOG_LEVEL: 'warn', SVC_MAIL_HOSTNAME: 'mx.cli-test.net',
};

/** One `svc …` run to its end, killed after 30 s. */
const svc = (...args: string[]) => runSvcCommand(args, env, 30_000);

// A scheduled email waits in the queue without any MX: the reads have something to show.
const sent = await call(app.baseUrl, 'POST', '/emails', {
  token: team.token, body: { from: 'hello@sender.net', to: 'ann@inbox-one.net', subject: 'Later', text: 'Hi', scheduled_at: 'in 1 hour' },
});
const emailId = sent.body.id as string;

t.test('queue summary, list and show print plain text, and JSON with --json', async (t) => {
  const [summary, summaryJson, list, show] = await Promise.all([
    svc('admin', 'queue', 'summary'), svc('admin', 'queue', 'summary', '--json'),
    svc('admin', 'queue', 'list', '--state', 'scheduled'), svc('admin', 'queue', 'show', emailId, '--json'),
  ]);
  t.equal(sent.status, 200);
  t.equal(summary.code, 0, summary.stderr);
  t.match(summary.stdout, /^1 recipients in the outbound queue: 0 queued, 0 deferred, 0 held, 0 submitting, 0 ambiguous, 1 scheduled$/m);
  t.match(summary.stdout, /^inbox-one\.net +us-east-1 +1 +0 +0 +0 +0 +0 +1 /m);
  t.match(JSON.parse(summaryJson.stdout), { object: 'queue_summary', totals: { scheduled: 1, total: 1 } });
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, new RegExp(`^${emailId} +scheduled +0 `, 'm'));
  t.match(JSON.parse(show.stdout), { id: emailId, status: 'scheduled', recipients: [{ address: 'ann@inbox-one.net', state: 'scheduled', history: [] }] });
});

t.test('hold, delete and trace run from the command line', async (t) => {
  const hold = await svc('admin', 'queue', 'hold', emailId);
  t.equal(hold.code, 0, hold.stderr);
  t.equal(hold.stdout, `0 recipients of email ${emailId} held\n`, 'a scheduled email is not in the queue yet: nothing to hold');
  const trace = await svc('admin', 'trace', 'inbox-one.net', '--timeout', '1s');
  t.equal(trace.code, 0, trace.stderr);
  t.equal(trace.stdout, 'tracing delivery attempts of inbox-one.net; Ctrl-C stops\n');
  const del = await svc('admin', 'queue', 'delete', emailId, '--reason', 'wrong list');
  t.equal(del.code, 0, del.stderr);
  t.equal(del.stdout, `email ${emailId}: 1 recipient failed (deleted_by_operator: wrong list); email.failed written for each\n`);
  const email = await call(app.baseUrl, 'GET', `/emails/${emailId}`, { token: team.token });
  t.equal(email.body.last_event, 'failed');
  const missing = await svc('admin', 'queue', 'show', '01900000-0000-7000-8000-000000000000');
  t.equal(missing.code, 1, 'an answer refused by svc exits 1');
  t.match(missing.stdout, /^error: not_found/);
});

t.test('a bad command line exits 2 with one line on stderr', async (t) => {
  const runs = await Promise.all([
    svc('admin', 'queue', 'list', '--state', 'frozen'), svc('admin', 'queue', 'flush'), svc('admin', 'trace', '--timeout', 'soon'),
  ]);
  for (const r of runs) {
    t.equal(r.code, 2, r.stderr);
    t.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    t.equal(r.stdout, '');
  }
  t.match(runs[0]!.stderr, /^svc admin queue list: --state: unknown value "frozen"/);
  const help = await svc('admin', '--help');
  t.match(help.stdout, /^ {2}svc admin queue summary \[--region /m);
  t.match(help.stdout, /^ {2}svc admin trace \[--timeout DURATION\] \[--json\] \[EMAIL_ID\|ADDRESS\|DOMAIN\]$/m);
});
