import t from 'tap';
import type { OutboundRole } from '../../bin/roles/outbound.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call, lastEventOf } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// One log line per delivery attempt, read from the appliance's own pino output: the recipient, the
// relay host and address, TLS protocol and cipher, the remote reply and its status code, the delay
// since acceptance and the attempt's number — what a mail admin greps an MTA's log for.
t.setTimeout(90_000);
const dns = await mailZone(['inbox-one.net']);
const mx = await startFakeMx({ dns: dns.address });
const clock = testClock();
const lines: Record<string, any>[] = [];
const app = await startTestAppliance({
  clock, roles: ['api', 'outbound'],
  env: { SVC_LOG_LEVEL: 'info', SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_REPLY_TIMEOUT_S: '3' },
  logDestination: { write: (line) => { lines.push(JSON.parse(line) as Record<string, any>); } },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); });
const outbound = app.appliance.running.find((r) => r.name === 'outbound') as OutboundRole;
const team = await app.newTeam('Logs');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
const send = async (to: string) => {
  const r = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: { from: 'hello@sender.net', to, subject: 'Hi', text: 'secret body text' } });
  if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
  return r.body.id as string;
};
const attemptsOf = (rcpt: string) => lines.filter((l) => l.msg === 'delivery attempt' && l.rcpt === rcpt);
const nth = (rcpt: string, n: number) => waitFor(`attempt ${n} for ${rcpt} to be logged`, async () => attemptsOf(rcpt)[n - 1]);

t.test('a delivery: relay, TLS, reply, delay and attempt number on one line', async (t) => {
  const id = await send('ann@inbox-one.net');
  clock.advance(1500);
  const line = await nth('ann@inbox-one.net', 1);
  t.match(line, {
    level: 30, emailId: id, recipientId: `${id}.0`, region: 'us-east-1', status: 'delivered',
    relay: `mx.inbox-one.net[127.0.0.1]:${mx.port}`, tls: /^TLSv1\.[23]$/, tlsCipher: /^(TLS_|ECDHE)/, tlsVerified: false,
    reply: /^250 /, attempt: 1,
  });
  t.ok(line.delay >= 1.5, `the delay counts from acceptance (${line.delay} s)`);
  t.type(line.attemptSeconds, 'number');
  t.notMatch(JSON.stringify(line), /secret body text/, 'never the body');
});

t.test('a deferral and its retry are numbered; the reply\'s status code is its own field', async (t) => {
  mx.script.set('later@inbox-one.net', { kind: 'rcpt', reply: '451 4.7.1 Greylisted, come back later' });
  const id = await send('later@inbox-one.net');
  const first = await nth('later@inbox-one.net', 1);
  t.match(first, { status: 'deferred', attempt: 1, dsn: '4.7.1', reply: /451 4\.7\.1 Greylisted/, relay: /^mx\.inbox-one\.net\[127\.0\.0\.1\]:\d+$/ });
  // The line is logged as the outcome is known; the retry's time is set when the outcome commits,
  // from the clock then, so the clock moves on only after that.
  await waitFor('the deferral recorded', async () => (await lastEventOf(app.baseUrl, team.token, id)) === 'delivery_delayed');
  mx.script.set('later@inbox-one.net', { kind: 'rcpt', reply: '550 5.1.1 No such user here' });
  clock.advance(61_000);
  outbound.poke();
  const second = await nth('later@inbox-one.net', 2);
  t.match(second, { status: 'bounced', attempt: 2, dsn: '5.1.1', reply: /^550 5\.1\.1 No such user/ });
  t.ok(second.delay >= 61, 'the delay spans both attempts');
});

t.test('no relay to try: relay none, svc\'s own reason as the reply', async (t) => {
  // Accepted while the domain has an MX; by its scheduled time it publishes a null MX.
  dns.set('gone-away.net', [{ type: 'MX', exchange: 'mx.inbox-one.net', priority: 10 }]);
  const at = new Date(clock.now().getTime() + 60_000).toISOString();
  const r = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: { from: 'hello@sender.net', to: 'x@gone-away.net', subject: 'Hi', text: 'x', scheduled_at: at } });
  t.equal(r.status, 200);
  dns.set('gone-away.net', [{ type: 'MX', exchange: '.', priority: 0 }]);
  clock.advance(61_000);
  outbound.poke();
  const line = await nth('x@gone-away.net', 1);
  t.match(line, { status: 'bounced', relay: 'none', tls: 'none', tlsCipher: null, dsn: '5.1.10', reply: /null MX/, attempt: 1 });
});
