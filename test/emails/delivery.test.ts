import t from 'tap';
import type { OutboundRole } from '../../bin/roles/outbound.js';
import { sweepAmbiguous } from '../../core/emails/ambiguous.js';
import { emailsRepo } from '../../storage/repos/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call, lastEventOf } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { eventsOf, mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';

// The outbound MTA end to end: API → queue → MIME + DKIM → the recipient's MX (a scripted
// smtp-server on loopback, found through the test DNS server) → rules → events.
const dns = await mailZone(['inbox-one.net', 'inbox-two.net', 'fallback.net']);
const mx = await startFakeMx({ dns: dns.address });
// fallback.net: its preferred MX resolves to an address nothing listens on.
dns.set('fallback.net', [{ type: 'MX', exchange: 'dead.fallback.net', priority: 5 }, { type: 'MX', exchange: 'mx.fallback.net', priority: 20 }]);
dns.set('dead.fallback.net', [{ type: 'A', value: '127.0.0.3' }]);
const clock = testClock();
const app = await startTestAppliance({
  clock, roles: ['api', 'outbound'],
  env: {
    SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_REPLY_TIMEOUT_S: '3',
    SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000',
  },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); });
const outbound = app.appliance.running.find((r) => r.name === 'outbound') as OutboundRole;
const team = await app.newTeam('Delivery');
const domains = fakeSendingDomains(app, dns);
domains.add({ teamId: team.teamId, name: 'sender.net' });
const base = app.baseUrl;
const send = async (body: Record<string, unknown>) => {
  const r = await call(base, 'POST', '/emails', { token: team.token, body: { from: 'Acme <hello@sender.net>', subject: 'Hello', html: '<p>Hi</p>', text: 'Hi', ...body } });
  if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
  return r.body.id as string;
};
const lastEvent = (id: string) => lastEventOf(base, team.token, id);
const until = (id: string, ...events: string[]) => waitFor(`${id} to reach ${events.join('/')}`, async () => { const e = await lastEvent(id); return events.includes(e) ? e : undefined; });
const at = (address: string) => mx.received.filter((m) => m.rcptTo === address);
const returnPathOf = (address: string) => app.appliance.services.sending.returnPaths.check(address, clock.now());

t.test('accepted: delivered, DKIM-signed for the domain, VERP return path, events in order', async (t) => {
  const id = await send({ to: 'ann@inbox-one.net', tags: { kind: 'welcome' } });
  await until(id, 'delivered');
  const [message] = at('ann@inbox-one.net');
  t.ok(message);
  t.equal(message!.dkim, 'pass', 'mailauth verifies the signature against the published key');
  t.equal(message!.dkimDomain, 'sender.net');
  const signature = /^DKIM-Signature:(.*?)\r\n(?=\S)/ms.exec(message!.raw.toString())![1]!.replace(/\s+/g, '');
  t.match(/;h=([^;]+)/.exec(signature)![1], /from.*from/i, 'From is oversigned');
  t.equal(message!.messageId, `<${id}@sender.net>`);
  t.match(await returnPathOf(message!.mailFrom), { ok: true, emailId: id, recipientId: `${id}.0` });
  t.match(message!.mailFrom, /^bounces\+[0-9a-f]{32}-0-[0-9a-f]{18}@send\.sender\.net$/, 'a signed return path');
  t.match(message!.raw.toString(), new RegExp(`X-Svc-Email-Id: ${id}`, 'i'));
  t.equal(message!.secure, true, 'STARTTLS was used (opportunistic, self-signed accepted)');
  const events = await eventsOf(app, id);
  t.same(events.map((e) => e.type), ['email.sent', 'email.delivered']);
  t.match(events[1]!.data, { email_id: id, to: ['ann@inbox-one.net'], from: 'Acme <hello@sender.net>', subject: 'Hello', message_id: `<${id}@sender.net>`, tags: { kind: 'welcome' } });
});

t.test('each recipient gets its own transaction and return path; bcc stays out of the headers', async (t) => {
  const id = await send({ to: 'a1@inbox-one.net', cc: 'c1@inbox-two.net', bcc: 'b1@inbox-two.net' });
  await waitFor('three deliveries', async () => ['a1@inbox-one.net', 'c1@inbox-two.net', 'b1@inbox-two.net'].every((a) => at(a).length === 1));
  const froms = ['a1@inbox-one.net', 'c1@inbox-two.net', 'b1@inbox-two.net'].map((a) => at(a)[0]!.mailFrom);
  t.same(await Promise.all(froms.map(async (f) => (await returnPathOf(f)) ?? {})), [0, 1, 2].map((i) => ({ ok: true, emailId: id, recipientId: `${id}.${i}` })));
  for (const a of ['a1@inbox-one.net', 'c1@inbox-two.net', 'b1@inbox-two.net']) t.notMatch(at(a)[0]!.raw.toString(), /b1@inbox-two\.net/);
  // The email reads delivered at its first recipient's outcome; the others' may commit a moment
  // later (each outcome rides on the next transaction), so their events are waited for.
  const delivered = await waitFor('a delivered event for each recipient', async () => {
    const events = (await eventsOf(app, id)).filter((e) => e.type === 'email.delivered');
    return events.length >= 3 ? events : undefined;
  });
  t.same(delivered.map((e) => e.data.to).flat().sort(), ['a1@inbox-one.net', 'b1@inbox-two.net', 'c1@inbox-two.net'], 'one delivered event per recipient, naming only it');
});

t.test('a 5xx "no such user" bounces Permanent/NoEmail and suppresses the address', async (t) => {
  mx.script.set('nobody@inbox-one.net', { kind: 'rcpt', reply: '550 5.1.1 <nobody@inbox-one.net>: Recipient address rejected: User unknown' });
  const id = await send({ to: 'nobody@inbox-one.net' });
  await until(id, 'bounced');
  const bounced = (await eventsOf(app, id)).find((e) => e.type === 'email.bounced')!;
  t.match(bounced.data.bounce, { type: 'Permanent', subType: 'NoEmail', diagnosticCode: [/550 5\.1\.1/] });
  t.same(bounced.data.to, ['nobody@inbox-one.net']);
  const suppression = await call(base, 'GET', '/suppressions/nobody@inbox-one.net', { token: team.token });
  t.match(suppression.body, { origin: 'bounce', source_id: id });
  const again = await send({ to: 'nobody@inbox-one.net' });
  t.equal(await lastEvent(again), 'suppressed', 'the next send to it never leaves svc');
  // Another team's send is not refused on one team's evidence: a tenant who runs a domain's MX could
  // otherwise make any address dead for everyone. A second team's own rejection makes it dead.
  const sendAs = (token: string, from: string) => call(base, 'POST', '/emails', { token, body: { from, to: 'nobody@inbox-one.net', subject: 's', text: 't' } });
  const other = await app.newTeam('Other');
  domains.add({ teamId: other.teamId, name: 'other-sender.net' });
  const second = await sendAs(other.token, 'x@other-sender.net');
  t.equal(second.status, 200, "one team's rejection does not refuse another team's send");
  await waitFor('the second team to meet the rejection', async () => (await call(base, 'GET', `/emails/${second.body.id}`, { token: other.token })).body.last_event === 'bounced');
  const third = await app.newTeam('Third');
  domains.add({ teamId: third.teamId, name: 'third-sender.net' });
  const refused = await sendAs(third.token, 'x@third-sender.net');
  t.equal(refused.status, 422);
  t.match(refused.body.details, { reason: 'invalid_recipient', cause: 'dead_address' }, 'rule 4: two teams met "no such mailbox" from the remote server');
});

t.test('a 5xx content refusal after the data bounces Transient and does not suppress', async (t) => {
  mx.script.set('picky@inbox-one.net', { kind: 'data', reply: '554 5.7.1 Message rejected as spam by Content Filtering.' });
  const id = await send({ to: 'picky@inbox-one.net' });
  await until(id, 'bounced');
  const bounced = (await eventsOf(app, id)).find((e) => e.type === 'email.bounced')!;
  t.match(bounced.data.bounce, { type: 'Transient', subType: 'ContentRejected' });
  const suppression = await call(base, 'GET', '/suppressions/picky@inbox-one.net', { token: team.token });
  t.equal(suppression.status, 404);
});

t.test('a 4xx defers with email.delivery_delayed, and the retry delivers', async (t) => {
  mx.script.set('later@inbox-one.net', { kind: 'data', reply: '451 4.7.1 Greylisting in action, please come back later' });
  const id = await send({ to: 'later@inbox-one.net' });
  await until(id, 'delivery_delayed');
  const delayed = (await eventsOf(app, id)).find((e) => e.type === 'email.delivery_delayed')!;
  t.match(delayed.data.delay, { type: 'TransientCommunicationFailure', delayedRecipients: ['later@inbox-one.net'] });
  t.ok(Date.parse(delayed.data.delay.expirationTime) > clock.now().getTime() + 71 * 3600_000, 'expires with the queue lifetime');
  mx.script.delete('later@inbox-one.net');
  outbound.poke();
  await new Promise((r) => setTimeout(r, 200));
  t.equal(await lastEvent(id), 'delivery_delayed', 'not retried before its time');
  clock.advance(61_000);
  outbound.poke();
  await until(id, 'delivered');
  t.same((await eventsOf(app, id)).map((e) => e.type), ['email.sent', 'email.delivery_delayed', 'email.delivered']);
});

t.test('MX order and fallback: an unreachable preferred MX is skipped', async (t) => {
  const id = await send({ to: 'falls@fallback.net' });
  await until(id, 'delivered');
  t.equal(at('falls@fallback.net').length, 1);
});

t.test('connections are reused per MX', async (t) => {
  const before = mx.connections;
  const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => send({ to: `reuse${i}@inbox-one.net` })));
  for (const id of ids) await until(id, 'delivered');
  t.ok(mx.connections - before < 8, `${mx.connections - before} connections for 8 messages`);
});

t.test('enforced TLS never falls back to plaintext or an unverified certificate', async (t) => {
  domains.add({ teamId: team.teamId, name: 'strict-sender.net', tls: 'enforced' });
  const id = await call(base, 'POST', '/emails', { token: team.token, body: { from: 'a@strict-sender.net', to: 'tls@inbox-one.net', subject: 'x', text: 'y' } });
  await until(id.body.id, 'delivery_delayed');
  t.equal(at('tls@inbox-one.net').length, 0, 'the self-signed MX certificate is refused: nothing sent');
});

t.test('the mailbox simulator resolves inside svc', async (t) => {
  const delivered = await send({ to: 'delivered@simulator.svc.invalid' });
  const bounced = await send({ to: 'bounced+x@simulator.svc.invalid' });
  const complained = await send({ to: 'complained@simulator.svc.invalid' });
  const suppressed = await send({ to: 'suppressed@simulator.svc.invalid' });
  await until(delivered, 'delivered');
  await until(bounced, 'bounced');
  await until(complained, 'complained');
  t.equal(await lastEvent(suppressed), 'suppressed');
  t.same((await eventsOf(app, complained)).map((e) => e.type), ['email.sent', 'email.delivered', 'email.complained']);
  t.match((await eventsOf(app, bounced)).find((e) => e.type === 'email.bounced')!.data.bounce, { type: 'Permanent' });
  t.equal(mx.received.filter((m) => m.rcptTo.endsWith('simulator.svc.invalid')).length, 0, 'nothing left svc');
  // Simulator bounces never suppress the address: it is not on the list, and a second send bounces again.
  const listed = await call(base, 'GET', `/suppressions/${encodeURIComponent('bounced+x@simulator.svc.invalid')}`, { token: team.token });
  t.equal(listed.status, 404, 'the bounced simulator address is not on the suppression list');
  const again = await send({ to: 'bounced+x@simulator.svc.invalid' });
  t.equal(await until(again, 'bounced', 'suppressed'), 'bounced', 'a second send to it bounces again instead of being suppressed');
});

t.test('scheduled mail is dispatched and delivered at its time', async (t) => {
  const id = await send({ to: 'planned@inbox-one.net', scheduled_at: 'in 2 hours' });
  outbound.poke();
  await new Promise((r) => setTimeout(r, 200));
  t.equal(at('planned@inbox-one.net').length, 0, 'not before its time');
  clock.advance(2 * 3600_000 + 1000);
  outbound.poke();
  await until(id, 'delivered');
  t.same((await eventsOf(app, id)).map((e) => e.type), ['email.scheduled', 'email.sent', 'email.delivered']);
});

t.test('an address suppressed after acceptance is suppressed at delivery', async (t) => {
  const id = await send({ to: 'changed-mind@inbox-one.net', scheduled_at: 'in 1 hour' });
  await call(base, 'POST', '/suppressions', { token: team.token, body: { email: 'changed-mind@inbox-one.net' } });
  clock.advance(3600_000 + 1000);
  outbound.poke();
  await until(id, 'suppressed');
  t.equal(at('changed-mind@inbox-one.net').length, 0);
});

t.test('an internal error defers, never bounces', async (t) => {
  const broken = domains.add({ teamId: team.teamId, name: 'broken-key.net' });
  broken.dkim.privateKeyPem = '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n';
  const id = await call(base, 'POST', '/emails', { token: team.token, body: { from: 'a@broken-key.net', to: 'x@inbox-one.net', subject: 'x', text: 'y' } });
  await until(id.body.id, 'delivery_delayed');
  const delayed = (await eventsOf(app, id.body.id)).find((e) => e.type === 'email.delivery_delayed')!;
  t.equal(delayed.data.delay.type, 'InternalFailure');
});

const recipients = (id: string) => emailsRepo(app.appliance.services.database.db).recipients(id);

t.test('an attempt svc cannot record (disk full) sends nothing and is retried in seconds, not counted', async (t) => {
  const recorder = app.appliance.services.sending.recorder;
  const markSubmitting = recorder.markSubmitting;
  let refused = 0;
  recorder.markSubmitting = async () => {
    refused++;
    throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
  };
  t.teardown(() => { recorder.markSubmitting = markSubmitting; });
  const id = await send({ to: 'unrecorded@inbox-one.net' });
  await until(id, 'delivery_delayed');
  recorder.markSubmitting = markSubmitting;
  t.ok(refused >= 1, 'the mark was refused');
  t.equal(at('unrecorded@inbox-one.net').length, 0, 'nothing reached the MX without its mark');
  const [row] = await recipients(id);
  t.equal(row!.state, 'queued');
  t.equal(row!.attempts, 0, 'not counted as an attempt: the remote server never saw it');
  t.equal(Date.parse(row!.next_attempt_at!) - clock.now().getTime() <= 10_000, true, `tried again within 10 s, not on the 1-minute schedule (${row!.next_attempt_at})`);
  t.match(row!.last_response, /could not record the attempt, nothing was sent: SQLITE_FULL/);
  clock.advance(10_001);
  outbound.poke();
  await until(id, 'delivered');
  t.equal(at('unrecorded@inbox-one.net').length, 1, 'then delivered once');
});

t.test('the reliability contract: data without a reply is never resent, then fails after two hours', async (t) => {
  mx.script.set('dropped@inbox-one.net', { kind: 'drop-after-data' });
  mx.script.set('silent@inbox-one.net', { kind: 'hang-after-data' });
  mx.script.set('reported@inbox-one.net', { kind: 'drop-after-data' });
  const dropped = await send({ to: 'dropped@inbox-one.net' });
  const silent = await send({ to: 'silent@inbox-one.net' });
  const reported = await send({ to: 'reported@inbox-one.net' });
  for (const id of [dropped, silent, reported]) {
    await waitFor(`${id} ambiguous`, async () => (await recipients(id))[0]!.state === 'ambiguous');
  }
  t.equal(await lastEvent(dropped), 'sent', 'reported as sent, not delivered');
  // Time passes; the queue is woken: nothing is resent.
  mx.script.delete('dropped@inbox-one.net');
  mx.script.delete('silent@inbox-one.net');
  clock.advance(30 * 60_000);
  outbound.poke();
  await new Promise((r) => setTimeout(r, 300));
  t.equal(at('dropped@inbox-one.net').length, 1, 'the dropped one went out once');
  t.equal(at('silent@inbox-one.net').length, 1, 'the unanswered one went out once');

  // A delivery report (DSN) naming one settles it before the sweep.
  const recorder = app.appliance.services.sending.recorder;
  const settled = await recorder.record(`${reported}.0`, { kind: 'delivered', response: 'DSN: 2.0.0 delivered' }, { report: true });
  t.equal(settled, true);
  t.equal(await lastEvent(reported), 'delivered');

  const sweep = () => sweepAmbiguous({ db: app.appliance.services.database.db, clock, logger: app.appliance.services.logger, recorder });
  t.equal(await sweep(), 0, 'not before two hours');
  clock.advance(91 * 60_000);
  t.equal(await sweep(), 2);
  for (const id of [dropped, silent]) {
    t.equal(await lastEvent(id), 'failed');
    const failed = (await eventsOf(app, id)).find((e) => e.type === 'email.failed')!;
    t.same(failed.data.failed, { reason: 'ambiguous_submission' });
  }
  t.equal(at('dropped@inbox-one.net').length + at('silent@inbox-one.net').length, 2, 'still never resent');
});

t.test('after a crash, a recipient left submitting is ambiguous, never resent', async (t) => {
  const id = await send({ to: 'inflight@inbox-one.net', scheduled_at: 'in 1 hour' });
  const db = app.appliance.services.database.db;
  // As a process killed in the data phase leaves it.
  await db.updateTable('email_recipients').set({ state: 'submitting', submitted_at: clock.now().toISOString() }).where('email_id', '=', id).execute();
  await db.updateTable('emails').set({ status: 'dispatched' }).where('id', '=', id).execute();
  t.equal(await app.appliance.services.sending.recorder.recoverInterrupted(['us-east-1']), 1);
  t.equal((await recipients(id))[0]!.state, 'ambiguous');
});
