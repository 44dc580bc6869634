import t from 'tap';
import { Resend } from 'resend';
import { envelopeData } from '../../core/emails/envelope.js';
import { emitEvent } from '../../core/outbox/index.js';
import { emailsRepo } from '../../storage/repos/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { call } from '../helpers/http.js';
import { verifyDomainThroughApi } from '../helpers/sending.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';
import { testClock } from '../helpers/test-clock.js';
import { getMetrics } from '../helpers/metrics-fixtures.js';

// Counts and rates from events the product itself writes: sends through POST /emails (a verified
// domain, a suppressed address), outcomes through the delivery recorder the outbound MTA uses,
// complaints through its complaint path, received mail through the inbound SMTP listener. Opens and
// clicks have no writer yet: they go into the outbox with the envelope the sending code builds.
const clock = testClock(new Date('2026-04-14T10:00:05.000Z'));
const rig = await startInboundRig({ clock });
t.teardown(() => rig.stop());
const { app, dns } = rig;
const base = app.baseUrl;
const db = app.appliance.services.database.db;
const recorder = app.appliance.services.sending.recorder;
dns.set('inbox-one.net', [{ type: 'MX', exchange: 'mx.inbox-one.net', priority: 10 }]);
dns.set('mx.inbox-one.net', [{ type: 'A', value: '127.0.0.1' }]);

const team = await app.newTeam('Metrics');
const domainId = await verifyDomainThroughApi(base, team.token, dns, 'metrics-sender.net');
rig.domains.set('metrics-sender.net', { teamId: team.teamId, domainId, name: 'metrics-sender.net' });
await call(base, 'POST', '/suppressions', { token: team.token, body: { email: 'sup@inbox-one.net' } });

const send = async (body: Record<string, unknown>) => {
  const r = await call(base, 'POST', '/emails', { token: team.token, body: { from: 'Acme <hello@metrics-sender.net>', subject: 'Hi', text: 'Hi', ...body } });
  if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
  return r.body.id as string;
};
const bounce = (type: 'Permanent' | 'Transient' | 'Undetermined') => ({
  kind: 'bounced' as const, response: '550 5.1.1 no', bounce: { type, subType: 'General' as const, message: 'refused', diagnosticCode: ['550 5.1.1 no'] },
});
const engagement = async (emailId: string, type: 'email.opened' | 'email.clicked', at: string) => {
  const email = (await emailsRepo(db).byIdAnyTeam(emailId))!;
  clock.set(new Date(at));
  const extra = type === 'email.opened'
    ? { open: { ipAddress: '192.0.2.1', timestamp: at, userAgent: 'Mail' } }
    : { click: { ipAddress: '192.0.2.1', link: 'https://example.org/', timestamp: at, userAgent: 'Mail' } };
  await inTransaction(db, (trx) => emitEvent(eventsRepo(trx), email.team_id, type, envelopeData(email, [JSON.parse(email.to_json)[0].address], extra), clock.now()));
};

// 2026-04-14 10:00 UTC. E1: three recipients (to, to, cc): two delivered, one bounces Permanent.
const e1 = await send({ to: ['ann@inbox-one.net', 'bob@inbox-one.net'], cc: 'carl@inbox-one.net' });
await recorder.markSubmitting(`${e1}.0`);
await recorder.record(`${e1}.0`, { kind: 'delivered', response: '250 ok' });
await recorder.record(`${e1}.1`, { kind: 'delivered', response: '250 ok' });
await recorder.record(`${e1}.2`, bounce('Permanent'));
// E2: one recipient suppressed at acceptance; the other delayed, then bounced Transient.
const e2 = await send({ to: ['dan@inbox-one.net', 'sup@inbox-one.net'] });
await recorder.record(`${e2}.0`, { kind: 'deferred', response: '451 try later', delayType: 'General' });
await recorder.record(`${e2}.0`, bounce('Transient'));
// E3: submitted, no reply after the data (ambiguous), given up by the sweep: failed.
const e3 = await send({ to: 'eve@inbox-one.net' });
await recorder.markSubmitting(`${e3}.0`);
await recorder.record(`${e3}.0`, { kind: 'ambiguous', reason: 'no reply' });
await recorder.record(`${e3}.0`, { kind: 'failed', reason: 'ambiguous_submission' });
// E4: delivered, then a complaint. E5: a report with an undetermined bounce.
const e4 = await send({ to: 'fay@inbox-one.net' });
await recorder.record(`${e4}.0`, { kind: 'delivered', response: '250 ok' });
await recorder.recordComplaint(`${e4}.0`);
const e5 = await send({ to: 'gus@inbox-one.net' });
await recorder.record(`${e5}.0`, bounce('Undetermined'));
// Two messages received by the domain.
for (const subject of ['one', 'two']) {
  await rig.send({ from: 'someone@elsewhere.example', to: ['inbox@metrics-sender.net'] }, rfc822({ From: 'someone@elsewhere.example', To: 'inbox@metrics-sender.net', Subject: subject }, 'hello'));
}
// Engagement: E1 opened on the 14th and again on the 15th, clicked once; E4 opened once.
await engagement(e1, 'email.opened', '2026-04-14T10:30:00.000Z');
await engagement(e1, 'email.clicked', '2026-04-14T10:31:00.000Z');
await engagement(e4, 'email.opened', '2026-04-14T11:00:00.000Z');
await engagement(e1, 'email.opened', '2026-04-15T09:00:00.000Z');
clock.set(new Date('2026-04-16T12:00:30.000Z'));

const window = { start_date: '2026-04-14', end_date: '2026-04-16' };

t.test('totals: every count and rate from the events sending and receiving wrote', async (t) => {
  const r = await getMetrics(base, team.token, window);
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.same(r.body.totals, {
    received: 2, delivered: 3, complained: 1, suppressed: 1, bounced: 3, bounced_transient: 1, bounced_permanent: 1,
    bounced_undetermined: 1, opened: 3, clicked: 1, unsubscribed: 0, delivery_delayed: 1, failed: 1,
    // Recipients handed to the MTA: 3 + 1 (the suppressed one never was) + 1 + 1 + 1.
    sent: 7, unique_opened: 2, unique_clicked: 1,
    // E1..E5, each once, though E2 was both suppressed (one address) and sent (the other).
    attempted: 5,
    delivery_rate: 3 / 7, open_rate: 3 / 3, click_rate: 1 / 3, bounce_rate: 3 / 7, complaint_rate: 1 / 7, unsubscribe_rate: 0,
  });
  t.notOk('data' in r.body);
});

t.test('domain: the verified domain with its name carries sent and received mail', async (t) => {
  const r = await getMetrics(base, team.token, { ...window, dimensions: 'domain', metrics: 'sent,received,delivered' });
  t.same(r.body.data, [{ domain_id: domainId, domain_name: 'metrics-sender.net', sent: 7, received: 2, delivered: 3 }]);
  const filtered = await getMetrics(base, team.token, { ...window, domain_id: domainId, metrics: 'sent' });
  t.equal(filtered.body.totals.sent, 7);
  const other = await getMetrics(base, team.token, { ...window, domain_id: crypto.randomUUID(), metrics: 'sent' });
  t.equal(other.body.totals.sent, 0);
});

t.test('unique opens count each email once, on the day of its first open', async (t) => {
  const r = await getMetrics(base, team.token, { ...window, dimensions: 'period', metrics: 'opened,unique_opened,clicked,unique_clicked' });
  t.same(r.body.data, [
    { period: '2026-04-14T00:00:00Z', opened: 2, unique_opened: 2, clicked: 1, unique_clicked: 1 },
    { period: '2026-04-15T00:00:00Z', opened: 1, unique_opened: 0, clicked: 0, unique_clicked: 0 },
    { period: '2026-04-16T00:00:00Z', opened: 0, unique_opened: 0, clicked: 0, unique_clicked: 0 },
  ]);
  const e1Only = await getMetrics(base, team.token, { ...window, email_id: e1, metrics: 'sent,delivered,bounced_permanent,opened,unique_opened,delivery_rate' });
  t.same(e1Only.body.totals, { sent: 3, delivered: 2, bounced_permanent: 1, opened: 2, unique_opened: 1, delivery_rate: 2 / 3 });
});

t.test('email: one row per email, received messages included by their own id', async (t) => {
  const r = await getMetrics(base, team.token, { ...window, dimensions: 'email,domain', metrics: 'attempted,sent,received' });
  const sentRows = (r.body.data as any[]).filter((row) => row.attempted > 0);
  t.same(sentRows.map((row) => row.email_id).sort(), [e1, e2, e3, e4, e5].sort());
  t.ok(sentRows.every((row) => row.domain_name === 'metrics-sender.net'));
  const received = (r.body.data as any[]).filter((row) => row.received > 0);
  t.equal(received.length, 2);
  const ids = new Set((await rig.api(team.token, 'GET', '/emails/receiving')).body.data.map((m: any) => m.id));
  t.ok(received.every((row) => ids.has(row.email_id)));
});

t.test('another team sees none of it', async (t) => {
  const other = await app.newTeam('Other');
  const r = await getMetrics(base, other.token, { ...window, metrics: 'sent,received' });
  t.same(r.body.totals, { sent: 0, received: 0 });
});

t.test("the resend SDK's emails.metrics", async (t) => {
  const resend = new Resend(team.token, { baseUrl: base });
  const totals = await resend.emails.metrics({ startDate: '2026-04-14', endDate: '2026-04-16', metrics: ['sent', 'delivered', 'delivery_rate'] });
  t.equal(totals.error, null, JSON.stringify(totals.error));
  t.same(totals.data?.totals, { sent: 7, delivered: 3, delivery_rate: 3 / 7 });
  t.notOk(totals.data && 'data' in totals.data);
  const byDay = await resend.emails.metrics({
    startDate: '2026-04-14', endDate: '2026-04-15', timezone: 'America/New_York', granularity: 'daily',
    dimensions: ['period', 'domain'], metrics: ['opened'], domainId: [domainId],
  });
  t.equal(byDay.error, null);
  t.same(byDay.data?.data, [
    { period: '2026-04-14T00:00:00-04:00', domain_id: domainId, domain_name: 'metrics-sender.net', opened: 2 },
    { period: '2026-04-15T00:00:00-04:00', domain_id: domainId, domain_name: 'metrics-sender.net', opened: 1 },
  ]);
  const refused = await resend.emails.metrics({ metrics: ['sent', 'nope' as never] });
  t.equal(refused.data, null);
  t.equal(refused.error?.name, 'invalid_parameter');
  const emailAndBroadcast = await resend.emails.metrics({ dimensions: ['email', 'broadcast'] as never });
  t.equal(emailAndBroadcast.error?.name, 'invalid_parameter');
});
