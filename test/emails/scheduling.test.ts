import t from 'tap';
import { Resend } from 'resend';
import { parseScheduledAt } from '../../core/scheduling.js';
import type { JobsRole } from '../../bin/roles/jobs.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { eventsOf, mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';

t.test('scheduled_at grammar (UTC), 1 minute to 30 days ahead', async (t) => {
  const now = new Date('2026-05-06T10:00:00Z'); // a Wednesday
  const cases: [string, string][] = [
    ['in 2 hours', '2026-05-06T12:00:00.000Z'],
    ['in 30 minutes', '2026-05-06T10:30:00.000Z'],
    ['in 1 min', '2026-05-06T10:01:00.000Z'],
    ['In A Day', '2026-05-07T10:00:00.000Z'],
    ['in 2 weeks', '2026-05-20T10:00:00.000Z'],
    ['tomorrow at 9am', '2026-05-07T09:00:00.000Z'],
    ['tomorrow', '2026-05-07T09:00:00.000Z'],
    ['friday 14:30', '2026-05-08T14:30:00.000Z'],
    ['friday at 2:30pm', '2026-05-08T14:30:00.000Z'],
    ['wednesday', '2026-05-13T09:00:00.000Z'],
    ['wednesday 5pm', '2026-05-06T17:00:00.000Z'],
    ['next wednesday 5pm', '2026-05-13T17:00:00.000Z'],
    ['today at noon', '2026-05-06T12:00:00.000Z'],
    ['monday at midnight', '2026-05-11T00:00:00.000Z'],
    ['2026-05-06T12:00:00Z', '2026-05-06T12:00:00.000Z'],
    ['2026-05-06T14:00:00+02:00', '2026-05-06T12:00:00.000Z'],
  ];
  for (const [phrase, expected] of cases) t.equal(parseScheduledAt(phrase, now), expected, phrase);
  for (const bad of ['in 30 seconds', 'soon', 'next year', '2026-05-07', 'tomorrow at 25:00', 'friday 13pm', 'in -2 hours']) {
    t.throws(() => parseScheduledAt(bad, now), { statusCode: 422, errorName: 'validation_error', message: /ISO 8601.*in 2 hours/ } as never, bad);
  }
  for (const out of ['today at 9am', 'in 31 days', '2026-05-06T10:00:30Z', '2026-06-06T10:00:01Z']) {
    t.throws(() => parseScheduledAt(out, now), { statusCode: 422, message: /between 1 minute and 30 days/ } as never, out);
  }
});

const dns = await mailZone();
const clock = testClock(new Date('2026-05-06T10:00:00Z'));
const app = await startTestAppliance({
  clock, roles: ['api', 'jobs'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' },
});
t.teardown(async () => { await app.stop(); await dns.stop(); });
const team = await app.newTeam('Scheduler');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'later-sender.net' });
const base = app.baseUrl;
const jobs = app.appliance.running.find((r) => r.name === 'jobs') as JobsRole;
const message = { from: 'a@later-sender.net', to: 'ann@inbox-one.net', subject: 'Later', text: 'hi' };
const get = async (id: string) => (await call(base, 'GET', `/emails/${id}`, { token: team.token })).body;

t.test('a scheduled send waits, can be rescheduled, and is dispatched at its time', async (t) => {
  const r = await call(base, 'POST', '/emails', { token: team.token, body: { ...message, scheduled_at: 'in 2 hours' } });
  t.equal(r.status, 200);
  const id = r.body.id as string;
  t.match(await get(id), { last_event: 'scheduled', scheduled_at: '2026-05-06T12:00:00.000Z' });
  t.match((await eventsOf(app, id)).map((e) => e.type), ['email.scheduled']);

  const moved = await call(base, 'PATCH', `/emails/${id}`, { token: team.token, body: { scheduled_at: 'tomorrow at 9am' } });
  t.same(moved.body, { object: 'email', id });
  t.equal((await get(id)).scheduled_at, '2026-05-07T09:00:00.000Z');
  const tooFar = await call(base, 'PATCH', `/emails/${id}`, { token: team.token, body: { scheduled_at: 'in 40 days' } });
  t.equal(tooFar.status, 422);

  clock.set('2026-05-07T08:59:00Z');
  await jobs.scheduler.runNow('release-scheduled');
  t.equal((await get(id)).last_event, 'scheduled', 'not before its time');
  clock.set('2026-05-07T09:00:00Z');
  await jobs.scheduler.runNow('release-scheduled');
  t.equal((await get(id)).last_event, 'queued', 'dispatched at its time');

  const cancel = await call(base, 'POST', `/emails/${id}/cancel`, { token: team.token });
  t.equal(cancel.status, 409);
  t.equal(cancel.body.name, 'resource_locked');
  const patch = await call(base, 'PATCH', `/emails/${id}`, { token: team.token, body: { scheduled_at: 'in 2 hours' } });
  t.equal(patch.status, 409);
  t.equal(patch.body.name, 'resource_locked');
  clock.set('2026-05-06T10:00:00Z');
});

t.test('cancel before dispatch: canceled with email.canceled; an immediate send is locked', async (t) => {
  const r = await call(base, 'POST', '/emails', { token: team.token, body: { ...message, scheduled_at: '2026-05-08T10:00:00Z' } });
  const id = r.body.id as string;
  const canceled = await call(base, 'POST', `/emails/${id}/cancel`, { token: team.token });
  t.same(canceled.body, { object: 'email', id });
  t.equal((await get(id)).last_event, 'canceled');
  t.match((await eventsOf(app, id)).map((e) => e.type), ['email.scheduled', 'email.canceled']);
  const again = await call(base, 'POST', `/emails/${id}/cancel`, { token: team.token });
  t.equal(again.status, 200, 'canceling twice answers the same');
  clock.set('2026-05-08T11:00:00Z');
  await jobs.scheduler.runNow('release-scheduled');
  t.equal((await get(id)).last_event, 'canceled', 'a canceled email is never dispatched');
  clock.set('2026-05-06T10:00:00Z');

  const now = await call(base, 'POST', '/emails', { token: team.token, body: message });
  const locked = await call(base, 'POST', `/emails/${now.body.id}/cancel`, { token: team.token });
  t.equal(locked.status, 409);
  t.equal(locked.body.name, 'resource_locked');
  const unknown = await call(base, 'POST', `/emails/${crypto.randomUUID()}/cancel`, { token: team.token });
  t.equal(unknown.status, 404);
});

t.test('scheduled_at outside the grammar or the window is refused naming both forms', async (t) => {
  const r = await call(base, 'POST', '/emails', { token: team.token, body: { ...message, scheduled_at: 'whenever' } });
  t.equal(r.status, 422);
  t.equal(r.body.name, 'validation_error');
  t.match(r.body.message, /ISO 8601/);
  t.match(r.body.message, /tomorrow at 9am/);
  const past = await call(base, 'POST', '/emails', { token: team.token, body: { ...message, scheduled_at: '2026-05-06T09:00:00Z' } });
  t.equal(past.status, 422);
});

t.test('the SDK: send with scheduledAt, update, cancel', async (t) => {
  const resend = new Resend(team.token, { baseUrl: base });
  const sent = await resend.emails.send({ ...message, scheduledAt: 'in 1 hour' });
  t.equal(sent.error, null);
  const id = sent.data!.id;
  const updated = await resend.emails.update({ id, scheduledAt: '2026-05-06T15:00:00Z' });
  t.equal(updated.error, null);
  t.same(updated.data, { object: 'email', id });
  const got = await resend.emails.get(id);
  t.equal(got.data?.scheduled_at, '2026-05-06T15:00:00.000Z');
  const canceled = await resend.emails.cancel(id);
  t.equal(canceled.error, null);
  t.equal((await resend.emails.get(id)).data?.last_event, 'canceled');
});
