import t from 'tap';
import { pino } from 'pino';
import { runAdmin } from '../../bin/admin-commands.js';
import { attemptTraces } from '../../bin/attempt-trace.js';
import { UsageError } from '../../bin/cli-args.js';
import type { OutboundRole } from '../../bin/roles/outbound.js';
import type { AttemptTraceLine } from '../../core/emails/index.js';
import { connectRedis } from '../../storage/redis/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor, withDeadline } from '../helpers/deadline.js';
import { eventsOf, mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call, lastEventOf } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// The operator's queue tools end to end: a real appliance (api + outbound) sending to a scripted
// MX that defers, driven through `svc admin …` as the CLI runs it (runAdmin over the admin socket).
t.setTimeout(180_000);
const dns = await mailZone(['inbox-one.net', 'inbox-two.net']);
const mx = await startFakeMx({ dns: dns.address });
const clock = testClock();
const app = await startTestAppliance({
  clock, roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_REPLY_TIMEOUT_S: '3' },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); });
const outbound = app.appliance.running.find((r) => r.name === 'outbound') as OutboundRole;
const team = await app.newTeam('Queue Tools');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
const hub = app.appliance.services.sending.traces.hub;

const send = async (to: string, extra: Record<string, unknown> = {}) => {
  const r = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: { from: 'Acme <hello@sender.net>', to, subject: 'Queued', text: 'Hi there', ...extra } });
  if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
  return r.body.id as string;
};
const lastEvent = (id: string) => lastEventOf(app.baseUrl, team.token, id);
const until = (id: string, event: string) => waitFor(`${id} to reach ${event}`, async () => (await lastEvent(id)) === event);
const deferring = (address: string) => mx.script.set(address, { kind: 'data', reply: '451 4.7.1 Greylisting in action, please come back later' });
const at = (address: string) => mx.received.filter((m) => m.rcptTo === address);

/** `svc admin …` as the CLI runs it: the exit code and every line it printed. */
async function admin(...args: string[]): Promise<{ code: number; lines: string[]; text: string }> {
  const lines: string[] = [];
  const code = await runAdmin(app.adminSocket, args, (line) => lines.push(line));
  return { code, lines, text: lines.join('\n') };
}
const adminJson = async (...args: string[]) => {
  const r = await admin(...args, '--json');
  if (r.code !== 0) throw new Error(`svc admin ${args.join(' ')} failed: ${r.text}`);
  return JSON.parse(r.text);
};

// Two messages deferred by the MX, one accepted: the queue's state for the reads.
deferring('slow@inbox-one.net');
deferring('later@inbox-one.net');
const slow = await send('slow@inbox-one.net', { headers: { 'X-Campaign': 'spring' } });
const later = await send('later@inbox-one.net');
const fine = await send('fine@inbox-two.net');
await Promise.all([until(slow, 'delivery_delayed'), until(later, 'delivery_delayed'), until(fine, 'delivered')]);

t.test('summary: counts by region and destination, the oldest, the next attempt; plain text and --json', async (t) => {
  const summary = await adminJson('queue', 'summary');
  t.match(summary, { object: 'queue_summary', totals: { deferred: 2, queued: 0, held: 0, total: 2 } });
  t.match(summary.regions, [{ region: 'us-east-1', counts: { deferred: 2, total: 2 } }]);
  t.equal(summary.destinations.length, 1, 'the delivered message has left the queue');
  const [dest] = summary.destinations;
  t.match(dest, { domain: 'inbox-one.net', region: 'us-east-1', counts: { deferred: 2 } });
  t.ok(Date.parse(dest.oldest_at) <= clock.now().getTime(), 'the oldest acceptance time');
  t.ok(Date.parse(dest.next_attempt_at) > clock.now().getTime(), 'the next attempt is the retry, in the future');
  const text = await admin('queue', 'summary');
  t.equal(text.code, 0);
  t.match(text.lines[0], /^2 recipients in the outbound queue: 0 queued, 2 deferred, 0 held/);
  t.match(text.text, /^REGION +TOTAL +QUEUED +DEFERRED +HELD/m);
  t.match(text.text, /^inbox-one\.net +us-east-1 +2 +0 +2 +0/m, 'the destination row, aligned');
  t.match((await adminJson('queue', 'summary', '--region', 'eu-west-1')).totals, { total: 0 }, 'another region is empty');
});

t.test('list: filters by state, domain, team, age; plain text and --json', async (t) => {
  const all = await adminJson('queue', 'list');
  t.same(all.data.map((e: { email_id: string }) => e.email_id), [slow, later], 'oldest first');
  t.match(all.data[0], { object: 'queue_entry', state: 'deferred', address: 'slow@inbox-one.net', attempts: 1, last_response: /451 4\.7\.1/ });
  t.equal((await adminJson('queue', 'list', '--state', 'deferred')).data.length, 2);
  t.equal((await adminJson('queue', 'list', '--state', 'held')).data.length, 0);
  t.equal((await adminJson('queue', 'list', '--domain', 'inbox-two.net')).data.length, 0);
  t.equal((await adminJson('queue', 'list', '--team', 'Queue Tools')).data.length, 2, 'a team by name');
  t.equal((await adminJson('queue', 'list', '--older-than', '1h')).data.length, 0, 'nothing waits for an hour yet');
  const one = await adminJson('queue', 'list', '--limit', '1');
  t.match(one, { has_more: true, data: [{ email_id: slow }] });
  const text = await admin('queue', 'list');
  t.match(text.lines[0], /^EMAIL ID +STATE +TRIES +AGE +NEXT +REGION +RECIPIENT +LAST REPLY$/);
  t.match(text.text, new RegExp(`^${slow} +deferred +1 +\\S+ +in \\S+ +us-east-1 +slow@inbox-one\\.net +451 4\\.7\\.1`, 'm'));
  const nobody = await admin('queue', 'list', '--team', 'No Such Team');
  t.equal(nobody.code, 1);
  t.match(nobody.text, /^error: not_found/);
});

t.test('show: envelope, headers, each attempt with the remote reply; the body only with --body', async (t) => {
  const shown = await adminJson('queue', 'show', slow);
  t.match(shown, { object: 'queued_email', id: slow, last_event: 'delivery_delayed', envelope: { from: 'hello@sender.net', recipients: ['slow@inbox-one.net'] } });
  t.same(shown.headers.find((h: { name: string }) => h.name === 'X-Campaign'), { name: 'X-Campaign', value: 'spring' });
  t.match(shown.headers, [{ name: 'From', value: 'Acme <hello@sender.net>' }]);
  const [r] = shown.recipients;
  t.match(r, { address: 'slow@inbox-one.net', state: 'deferred', attempts: 1 });
  t.match(r.history, [{ attempt: 1, outcome: 'deferred', reply: /^451 4\.7\.1 Greylisting/, relay: /^mx\.inbox-one\.net\[127\.0\.0\.1\]:\d+$/ }]);
  t.notOk('body' in shown, 'no body without --body');
  const withBody = await adminJson('queue', 'show', slow, '--body');
  t.match(withBody.body, { text: 'Hi there', html: null, attachments: [] });
  const text = await admin('queue', 'show', slow, '--recipient', 'slow@inbox-one.net');
  t.match(text.text, /^ {2}X-Campaign: spring$/m);
  t.match(text.text, /^recipient slow@inbox-one\.net \(to\) {2}deferred {2}1 attempts {2}next attempt /m);
  t.match(text.text, /^ {2}#1 {2}\S+ {2}deferred {2}mx\.inbox-one\.net\[127\.0\.0\.1\]:\d+ {2}451 4\.7\.1/m);
  t.notMatch(text.text, /Hi there/, 'the body stays out');
  t.match((await admin('queue', 'show', slow, '--body')).text, /^--- text ---\nHi there$/m);
  const missing = await admin('queue', 'show', '01900000-0000-7000-8000-000000000000');
  t.equal(missing.code, 1);
  t.match(missing.text, /^error: not_found: Email not found/);
});

t.test('hold: the outbound queue never delivers a held message; release and flush deliver', async (t) => {
  mx.script.delete('slow@inbox-one.net');
  mx.script.delete('later@inbox-one.net');
  const held = await admin('queue', 'hold', slow);
  t.same(held, { code: 0, lines: [`1 recipient of email ${slow} held`], text: `1 recipient of email ${slow} held` });
  t.match((await adminJson('queue', 'summary')).totals, { held: 1, deferred: 1 });
  t.equal(await lastEvent(slow), 'delivery_delayed', 'the API shows a held message as it was: waiting');
  // Past both retries: `later` is delivered, which proves the queue looked; `slow` is held.
  clock.advance(5 * 60_000);
  outbound.poke();
  await until(later, 'delivered');
  const sentinel = await send('sentinel@inbox-one.net');
  await until(sentinel, 'delivered');
  t.equal(at('slow@inbox-one.net').length, 0, 'the MX would accept, yet nothing was sent');
  t.match((await adminJson('queue', 'list', '--state', 'held')).data, [{ email_id: slow, state: 'held' }]);
  t.equal((await admin('queue', 'flush', slow)).lines[0], `0 recipients of email ${slow} due now`, 'a flush leaves held mail held');

  const released = await admin('queue', 'release', slow);
  t.equal(released.lines[0], `1 recipient of email ${slow} released`);
  await until(slow, 'delivered');
  t.equal(at('slow@inbox-one.net').length, 1);

  // A deferred message not yet due: only the flush makes it go (the clock does not move).
  deferring('flushme@inbox-two.net');
  const flushMe = await send('flushme@inbox-two.net');
  await until(flushMe, 'delivery_delayed');
  mx.script.delete('flushme@inbox-two.net');
  const flushed = await adminJson('queue', 'flush', '--domain', 'inbox-two.net');
  t.match(flushed, { object: 'queue_move', action: 'flush', recipients: 1, regions: ['us-east-1'] });
  await until(flushMe, 'delivered');
  t.match((await adminJson('queue', 'show', flushMe)).recipients[0].history, [{ outcome: 'deferred' }, { attempt: 2, outcome: 'delivered', reply: /^250 / }]);
});

t.test('delete: recipients failed with the reason and an email.failed event; never while submitting', async (t) => {
  deferring('gone@inbox-one.net');
  const gone = await send('gone@inbox-one.net');
  await until(gone, 'delivery_delayed');
  const done = await admin('queue', 'delete', gone, '--reason', 'customer asked');
  t.equal(done.code, 0);
  t.equal(done.lines[0], `email ${gone}: 1 recipient failed (deleted_by_operator: customer asked); email.failed written for each`);
  t.equal(await lastEvent(gone), 'failed');
  const failed = (await eventsOf(app, gone)).filter((e) => e.type === 'email.failed');
  t.equal(failed.length, 1, 'one email.failed event (webhooks deliver it)');
  t.match(failed[0]!.data, { email_id: gone, to: ['gone@inbox-one.net'], failed: { reason: 'deleted_by_operator: customer asked' } });
  t.match((await adminJson('queue', 'show', gone)).recipients[0], { state: 'failed', last_response: 'deleted_by_operator: customer asked' });
  const again = await admin('queue', 'delete', gone);
  t.match(again.text, /nothing to fail, every recipient already has its outcome\n {2}gone@inbox-one\.net already failed/);

  // A recipient being submitted (the MX holds the reply) cannot be deleted: its reply decides it.
  mx.script.set('stuck@inbox-one.net', { kind: 'hang-after-data' });
  const stuck = await send('stuck@inbox-one.net');
  await waitFor('the recipient to be submitting', async () => (await adminJson('queue', 'list', '--state', 'submitting')).data.length === 1);
  const refused = await admin('queue', 'delete', stuck);
  t.equal(refused.code, 1);
  t.match(refused.text, /^error: resource_locked: Recipient stuck@inbox-one\.net of email \S+ is being submitted right now/);
  await waitFor('the submission to turn ambiguous', async () => (await adminJson('queue', 'list', '--state', 'ambiguous')).data.length === 1);
  t.match((await adminJson('queue', 'delete', stuck)), { failed: ['stuck@inbox-one.net'], reason: 'deleted_by_operator' });
  t.equal(await lastEvent(stuck), 'failed');
});

t.test('trace: each attempt as it happens, plain text and --json, until the stream ends', async (t) => {
  deferring('traced@inbox-one.net');
  const plain = admin('trace', 'traced@inbox-one.net');
  const json = admin('trace', 'inbox-one.net', '--json');
  const other = admin('trace', 'inbox-two.net', '--json');
  await waitFor('three watchers', async () => hub.watchers === 3);
  const id = await send('traced@inbox-one.net');
  await until(id, 'delivery_delayed');
  hub.endAll();
  const [p, j, o] = await withDeadline('the traces to end', Promise.all([plain, json, other]));
  t.equal(p.code, 0);
  t.equal(p.lines[0], 'tracing delivery attempts of traced@inbox-one.net; Ctrl-C stops');
  t.match(p.lines[1], new RegExp(`^\\S+Z {2}deferred {2}traced@inbox-one\\.net {2}#1 {2}mx\\.inbox-one\\.net\\[127\\.0\\.0\\.1\\]:\\d+ {2}tls TLSv1\\.[23] {2}[\\d.]+s {2}451 4\\.7\\.1 .* {2}email ${id}$`));
  const lines = j.lines.map((l) => JSON.parse(l) as AttemptTraceLine);
  t.match(lines, [{ object: 'attempt', email_id: id, rcpt: 'traced@inbox-one.net', domain: 'inbox-one.net', attempt: 1, status: 'deferred', reply: /^451 / }]);
  t.same(o.lines, [], 'another destination saw nothing');
  const timed = await withDeadline('a trace with --timeout', admin('trace', '--timeout', '1s'));
  t.same(timed, { code: 0, lines: ['tracing delivery attempts; Ctrl-C stops'], text: 'tracing delivery attempts; Ctrl-C stops' });
});

t.test('trace across processes: an outbound process without the api role publishes through Redis', async (t) => {
  const redis = await connectRedis({ url: app.redis.url, commandTimeoutMs: 2000 });
  t.teardown(() => redis.disconnect());
  const api = attemptTraces(redis, pino({ level: 'silent' }));
  const outboundSide = attemptTraces(redis, pino({ level: 'silent' })).sink(false);
  const seen: AttemptTraceLine[] = [];
  const stop = api.hub.watch({ domain: 'far.example' }, (line) => seen.push(line), () => undefined);
  t.teardown(stop);
  const line: AttemptTraceLine = {
    object: 'attempt', at: new Date().toISOString(), email_id: 'e', recipient_id: 'e.0', team_id: 't', region: 'us-east-1', rcpt: 'a@far.example',
    domain: 'far.example', attempt: 1, status: 'delivered', relay: 'none', tls: 'none', reply: '250 ok', dsn: null, delay_s: 1, attempt_s: 0.1,
  };
  // The subscription starts with the first watcher; lines published before it was ready are a view lost, not mail.
  await waitFor('the line to cross Redis', async () => { outboundSide({ ...line }); return seen.length > 0; }, 10_000, 200);
  t.match(seen[0], line);
});

t.test('bad command lines are usage errors (exit 2); --help everywhere', async (t) => {
  const usage: [string[], RegExp][] = [
    [['queue', 'list', '--state', 'frozen'], /^svc admin queue list: --state: unknown value "frozen"; one of scheduled, queued, deferred, held/],
    [['queue', 'list', '--older-than', 'soon'], /^svc admin queue list: --older-than: must be a duration like 90s/],
    [['queue', 'list', '--limit', '0'], /--limit: must be a whole number from 1 to 1000/],
    [['queue', 'summary', '--region', 'mars-1'], /--region: unknown value "mars-1"/],
    [['queue', 'flush'], /^svc admin queue flush: give one of EMAIL_ID, --domain DOMAIN or --region REGION/],
    [['queue', 'flush', slow, '--domain', 'inbox-one.net'], /give one of EMAIL_ID/],
    [['queue', 'hold', '--region', 'us-east-1'], /^svc admin queue hold: unknown option --region/],
    [['queue', 'show'], /^svc admin queue show: EMAIL_ID is needed/],
    [['queue', 'delete', slow, '--reasons', 'x'], /unknown option --reasons \(did you mean --reason\?\)/],
    [['queue', 'frob'], /^svc admin queue: unknown action "frob"; one of summary, list, show, flush, hold, release, delete/],
    [['trace', '--timeout', 'forever'], /^svc admin trace: --timeout: must be a duration/],
    [['trace', 'a', 'b'], /^svc admin trace: unexpected argument "b"/],
  ];
  for (const [args, message] of usage) {
    const err = await admin(...args).then(() => undefined, (e: unknown) => e);
    t.ok(err instanceof UsageError, `${args.join(' ')}: a usage error`);
    t.match((err as Error | undefined)?.message, message);
  }
  for (const words of [['queue', 'summary'], ['queue', 'list'], ['queue', 'show'], ['queue', 'flush'], ['queue', 'hold'], ['queue', 'release'], ['queue', 'delete'], ['trace']]) {
    const help = await admin(...words, '--help');
    t.equal(help.code, 0);
    t.match(help.lines[0], new RegExp(`^usage: svc admin ${words.join(' ')}`));
  }
  t.match((await admin('queue', '--help')).text, /^usage: svc admin queue ACTION/);
  const bad = await call(app.baseUrl, 'GET', '/admin/queue/summary');
  t.equal(bad.status, 404, 'the queue tools are on the admin socket only');
});
