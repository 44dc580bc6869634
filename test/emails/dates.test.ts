import t from 'tap';
import { parseScheduledAt } from '../../core/scheduling.js';
import { parseInstant } from '../../core/time.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';

// Dates are read by luxon: a day the month does not have is no date. `new Date()` used to move
// 2026-02-30T09:00:00Z to March 2 — ten days after this clock, inside the scheduling window, so the
// send was accepted for a day nobody asked for.
const now = new Date('2026-02-20T00:00:00Z');
const impossible = ['2026-02-30T09:00:00Z', '2026-02-29T09:00:00Z', '2026-04-31T09:00:00+02:00', '2026-02-28T25:00:00Z', '2026-02-28T09:00:60Z', '2026-13-01T09:00:00Z'];

t.test('the parsers refuse a day the month does not have, an hour 25, a second 60', async (t) => {
  for (const raw of impossible) {
    t.throws(() => parseScheduledAt(raw, now), { statusCode: 422, errorName: 'validation_error', message: /ISO 8601/ } as never, `scheduled_at ${raw}`);
    t.throws(() => parseInstant('start_date', raw), { statusCode: 422, errorName: 'invalid_parameter', message: /start_date/ } as never, `start_date ${raw}`);
  }
  t.equal(parseScheduledAt('2026-02-28T09:00:00Z', now), '2026-02-28T09:00:00.000Z', 'the month\'s last day is a day');
  t.equal(parseInstant('end_date', '2028-02-29T23:59:59.5-01:00'), '2028-03-01T00:59:59.500Z', 'a leap day is one, and offsets still count');
  t.equal(parseInstant('end_date', '2026-02-28t09:00:00z'), '2026-02-28T09:00:00.000Z', 'lower-case T and Z as before');
});

const dns = await mailZone();
const clock = testClock(now);
const app = await startTestAppliance({ clock, env: { SVC_DNS_SERVERS: dns.address } });
t.teardown(async () => { await app.stop(); await dns.stop(); });
const team = await app.newTeam('Calendar');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'calendar-sender.net' });
const message = { from: 'a@calendar-sender.net', to: 'ann@inbox-one.net', subject: 'When', text: 'hi' };

t.test('POST /emails and PATCH /emails/{id}: scheduled_at 2026-02-30T09:00:00Z is 422, nothing scheduled', async (t) => {
  const refused = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: { ...message, scheduled_at: '2026-02-30T09:00:00Z' } });
  t.equal(refused.status, 422, JSON.stringify(refused.body));
  t.match(refused.body, { statusCode: 422, name: 'validation_error', errors: [{ path: 'scheduled_at' }] });
  t.match(refused.body.message, /ISO 8601.*tomorrow at 9am/);
  const listed = await call(app.baseUrl, 'GET', '/emails', { token: team.token });
  t.same(listed.body.data, [], 'no email was accepted');

  const scheduled = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: { ...message, scheduled_at: '2026-02-27T09:00:00Z' } });
  t.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
  const moved = await call(app.baseUrl, 'PATCH', `/emails/${scheduled.body.id}`, { token: team.token, body: { scheduled_at: '2026-02-30T09:00:00Z' } });
  t.equal(moved.status, 422, 'a reschedule to the same impossible day is refused too');
  const kept = await call(app.baseUrl, 'GET', `/emails/${scheduled.body.id}`, { token: team.token });
  t.equal(kept.body.scheduled_at, '2026-02-27T09:00:00.000Z', 'the email keeps its time');
});

t.test('every start_date / end_date filter refuses an impossible day with 422 invalid_parameter', async (t) => {
  const routes = ['/emails', '/emails/receiving', '/suppressions', '/logs', '/emails/metrics'];
  for (const route of routes) {
    for (const [param, value] of [['start_date', '2026-02-30T00:00:00Z'], ['end_date', '2026-04-31T00:00:00Z']] as const) {
      const r = await call(app.baseUrl, 'GET', `${route}?${param}=${encodeURIComponent(value)}`, { token: team.token });
      t.equal(r.status, 422, `${route} ${param}=${value}`);
      t.match(r.body, { statusCode: 422, name: 'invalid_parameter' }, `${route} ${param}`);
      t.match(r.body.message, param, `${route}: the message names ${param}`);
    }
    const good = await call(app.baseUrl, 'GET', `${route}?start_date=${encodeURIComponent('2026-02-01T00:00:00Z')}&end_date=${encodeURIComponent('2026-02-28T00:00:00Z')}`, { token: team.token });
    t.equal(good.status, 200, `${route}: real days pass (${JSON.stringify(good.body).slice(0, 200)})`);
  }
  const metricsDay = await call(app.baseUrl, 'GET', '/emails/metrics?start_date=2026-02-30', { token: team.token });
  t.equal(metricsDay.status, 422, 'a metrics date without a time is a calendar day too: 2026-02-30 is none');
});
