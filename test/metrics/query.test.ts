import t from 'tap';
import { metricNames } from '../../core/metrics/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { testClock } from '../helpers/test-clock.js';
import { bounceOf, fakeEmail, getMetrics, writeEmailEvent } from '../helpers/metrics-fixtures.js';

// The query parameters of GET /emails/metrics: defaults, clamping, list forms, every refusal.
const clock = testClock(new Date('2026-06-15T12:34:56.000Z'));
const app = await startTestAppliance({ clock, env: { SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
t.teardown(() => app.stop());
const db = app.appliance.services.database.db;
const base = app.baseUrl;
const { token, teamId } = await app.newTeam('Query');

// 2026-06-15: three sent, two delivered, one bounced; 2026-06-08 (before the default week): one
// sent and delivered; 12:34 (the minute still open): one more, never counted.
const email = fakeEmail();
const [second, third, older, late] = [fakeEmail(), fakeEmail(), fakeEmail(), fakeEmail()];
await writeEmailEvent(db, teamId, 'email.sent', email, '2026-06-15T09:00:00Z');
await writeEmailEvent(db, teamId, 'email.delivered', email, '2026-06-15T09:00:10Z');
await writeEmailEvent(db, teamId, 'email.sent', second, '2026-06-15T12:33:00Z');
await writeEmailEvent(db, teamId, 'email.delivered', second, '2026-06-15T12:33:59Z');
await writeEmailEvent(db, teamId, 'email.sent', third, '2026-06-15T09:01:00Z');
await writeEmailEvent(db, teamId, 'email.bounced', third, '2026-06-15T09:01:00Z', bounceOf('Transient'));
await writeEmailEvent(db, teamId, 'email.sent', older, '2026-06-08T23:59:00Z');
await writeEmailEvent(db, teamId, 'email.delivered', older, '2026-06-08T23:59:00Z');
await writeEmailEvent(db, teamId, 'email.sent', late, '2026-06-15T12:34:05Z');
await writeEmailEvent(db, teamId, 'email.delivered', late, '2026-06-15T12:34:10Z');

t.test('defaults: every metric, no dimension, daily, UTC, a week of days ending now, data absent', async (t) => {
  const r = await getMetrics(base, token);
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.same(Object.keys(r.body), ['object', 'start_date', 'end_date', 'metrics', 'dimensions', 'granularity', 'data_as_of', 'totals']);
  t.notOk('data' in r.body, 'no dimensions: data is absent, not empty');
  t.equal(r.body.object, 'metrics');
  t.equal(r.body.end_date, '2026-06-15T12:34:00.000Z', 'now, clamped to the last completed minute');
  t.equal(r.body.start_date, '2026-06-09T00:00:00.000Z', 'the calendar day six days before the end');
  t.equal(r.body.data_as_of, '2026-06-15T12:34:00.000Z');
  t.same(r.body.metrics, metricNames);
  t.same(r.body.dimensions, []);
  t.equal(r.body.granularity, 'daily');
  t.same(Object.keys(r.body.totals), metricNames, 'totals carry every requested metric');
  t.match(r.body.totals, { sent: 3, delivered: 2, bounced: 1, bounced_transient: 1, bounced_permanent: 0, unsubscribed: 0, unsubscribe_rate: 0, attempted: 3, delivery_rate: 2 / 3, bounce_rate: 1 / 3 });
});

t.test('end_date in the future is clamped to now, then to the last completed minute', async (t) => {
  const r = await getMetrics(base, token, { end_date: '2027-01-01T00:00:00Z', metrics: 'delivered' });
  t.equal(r.body.end_date, '2026-06-15T12:34:00.000Z');
  t.equal(r.body.totals.delivered, 2, 'the event at 12:34:10 is in the open minute');
  const past = await getMetrics(base, token, { start_date: '2026-06-15T09:00:00Z', end_date: '2026-06-15T09:00:59Z', metrics: 'delivered' });
  t.equal(past.body.end_date, '2026-06-15T09:00:00.000Z', 'a past end with seconds is floored to its minute');
  t.equal(past.body.totals.delivered, 0);
  const minute = await getMetrics(base, token, { start_date: '2026-06-15T09:00:00Z', end_date: '2026-06-15T09:01:00Z', metrics: 'delivered' });
  t.equal(minute.body.totals.delivered, 1);
  const onlyStart = await getMetrics(base, token, { start_date: '2026-06-01', metrics: 'delivered' });
  t.equal(onlyStart.body.start_date, '2026-06-01T00:00:00.000Z');
  t.equal(onlyStart.body.totals.delivered, 3);
  const onlyEnd = await getMetrics(base, token, { end_date: '2026-06-10', metrics: 'delivered' });
  t.same([onlyEnd.body.start_date, onlyEnd.body.end_date], ['2026-06-04T00:00:00.000Z', '2026-06-11T00:00:00.000Z'], 'six days before the end date, seven days in all');
  t.equal(onlyEnd.body.totals.delivered, 1);
  const zoned = await getMetrics(base, token, { end_date: '2026-06-10', timezone: 'America/New_York', metrics: 'delivered' });
  t.same([zoned.body.start_date, zoned.body.end_date], ['2026-06-04T04:00:00.000Z', '2026-06-11T04:00:00.000Z'], 'dates are days of the timezone');
  t.equal(zoned.body.totals.delivered, 1, '06-08 23:59 UTC is 06-08 19:59 in New York');
});

t.test('ragged window ends are counted to the minute', async (t) => {
  const head = await getMetrics(base, token, { start_date: '2026-06-15T09:01:00Z', end_date: '2026-06-15T12:33:00Z', metrics: 'delivered,bounced,sent' });
  t.same(head.body.totals, { delivered: 0, bounced: 1, sent: 1 }, '09:00 is out, 09:01 is in, 12:33 is out');
  const tail = await getMetrics(base, token, { start_date: '2026-06-15T09:00:00Z', end_date: '2026-06-15T12:34:00Z', metrics: 'delivered,bounced,sent', dimensions: 'period', granularity: 'hourly' });
  t.same(tail.body.data.map((r: any) => [r.period, r.delivered, r.sent]), [
    ['2026-06-15T09:00:00Z', 1, 2], ['2026-06-15T10:00:00Z', 0, 0], ['2026-06-15T11:00:00Z', 0, 0], ['2026-06-15T12:00:00Z', 1, 1],
  ]);
});

t.test('metrics: comma-separated, repeated, or both; order kept, repeats dropped', async (t) => {
  const comma = await getMetrics(base, token, { metrics: 'delivered,sent,delivery_rate' });
  t.same(comma.body.metrics, ['delivered', 'sent', 'delivery_rate']);
  t.same(comma.body.totals, { delivered: 2, sent: 3, delivery_rate: 2 / 3 });
  const repeated = await getMetrics(base, token, { metrics: ['delivered', 'sent', 'delivery_rate'] });
  t.same(repeated.body, comma.body);
  const both = await getMetrics(base, token, { metrics: ['delivered,sent', 'delivery_rate', 'sent'] });
  t.same(both.body.metrics, ['delivered', 'sent', 'delivery_rate']);
  const unsub = await getMetrics(base, token, { metrics: 'unsubscribed,unsubscribe_rate' });
  t.same(unsub.body.totals, { unsubscribed: 0, unsubscribe_rate: 0 }, 'known names, zero until unsubscribes exist');
  const dims = await getMetrics(base, token, { dimensions: ['period', 'domain'], metrics: 'delivered' });
  t.same(dims.body.dimensions, ['period', 'domain'], 'dimensions may be repeated too');
});

t.test('rates are fractions and 0 when nothing is in the denominator', async (t) => {
  const empty = await getMetrics(base, token, { start_date: '2026-01-01', end_date: '2026-01-02', metrics: 'delivery_rate,open_rate,click_rate,bounce_rate,complaint_rate' });
  t.same(empty.body.totals, { delivery_rate: 0, open_rate: 0, click_rate: 0, bounce_rate: 0, complaint_rate: 0 });
});

t.test('data: present with dimensions (empty when nothing matches), absent without', async (t) => {
  const none = await getMetrics(base, token, { dimensions: 'domain', start_date: '2026-01-01', end_date: '2026-01-02' });
  t.same(none.body.data, [], 'a dimension with no rows gives an empty list');
  const period = await getMetrics(base, token, { dimensions: 'period', metrics: 'delivered' });
  t.equal(period.body.data.length, 7, 'a period series lists every day of the window');
  t.same(period.body.data.at(-1), { period: '2026-06-15T00:00:00Z', delivered: 2 });
  const perEmail = await getMetrics(base, token, { dimensions: 'email', metrics: 'delivered' });
  t.same(perEmail.body.data.map((r: any) => Object.keys(r)), [['email_id', 'delivered'], ['email_id', 'delivered'], ['email_id', 'delivered']]);
  t.same(perEmail.body.data.map((r: any) => r.email_id), [email.id, second.id, third.id].sort(), 'one row per email of the window, by id');
});

t.test('broadcasts: the dimension and the filter work and find nothing yet', async (t) => {
  const dim = await getMetrics(base, token, { dimensions: 'broadcast', metrics: 'delivered,sent' });
  t.equal(dim.status, 200);
  t.same(dim.body.data, []);
  t.same(dim.body.totals, { delivered: 0, sent: 0 }, 'transactional mail belongs to no broadcast');
  const filter = await getMetrics(base, token, { broadcast_id: crypto.randomUUID(), dimensions: 'period', metrics: 'delivered' });
  t.equal(filter.body.totals.delivered, 0);
  t.ok(filter.body.data.every((r: any) => r.delivered === 0));
});

t.test('id filters: comma-separated or repeated, up to 100 each', async (t) => {
  const ids = Array.from({ length: 100 }, () => crypto.randomUUID());
  const hundred = await getMetrics(base, token, { domain_id: ids.join(','), metrics: 'delivered' });
  t.equal(hundred.status, 200);
  t.equal(hundred.body.totals.delivered, 0);
  const split = await getMetrics(base, token, { email_id: [ids.slice(0, 50).join(','), ...ids.slice(50)], metrics: 'delivered' });
  t.equal(split.status, 200, 'repeated and comma-separated add up to 100');
  for (const name of ['domain_id', 'email_id', 'broadcast_id']) {
    const r = await getMetrics(base, token, { [name]: [...ids, crypto.randomUUID()].join(',') });
    t.equal(r.status, 422, `${name}: 101 ids`);
    t.equal(r.body.name, 'invalid_parameter');
    t.match(r.body.message, /100/);
  }
  const byEmail = await getMetrics(base, token, { email_id: email.id, metrics: 'delivered,sent' });
  t.same(byEmail.body.totals, { delivered: 1, sent: 1 });
});

t.test('every refusal is 422 invalid_parameter naming the parameter', async (t) => {
  const refused: [Record<string, string | string[]>, string][] = [
    [{ metrics: 'delivered,opens' }, 'metrics'],
    [{ metrics: ['sent', 'Delivered'] }, 'metrics'],
    [{ dimensions: 'day' }, 'dimensions'],
    [{ dimensions: 'email,broadcast' }, 'dimensions'],
    [{ dimensions: 'email', broadcast_id: crypto.randomUUID() }, 'broadcast_id'],
    [{ dimensions: 'broadcast', email_id: crypto.randomUUID() }, 'email_id'],
    [{ granularity: 'minutely' }, 'granularity'],
    [{ timezone: 'Mars/Olympus_Mons' }, 'timezone'],
    [{ timezone: '+05:00' }, 'timezone'],
    [{ start_date: '2026-06' }, 'start_date'],
    [{ start_date: '2026-02-30' }, 'start_date'],
    [{ start_date: 'yesterday' }, 'start_date'],
    [{ end_date: '15/06/2026' }, 'end_date'],
    [{ start_date: '2026-06-10', end_date: '2026-06-01' }, 'start_date'],
    [{ start_date: '2026-07-01' }, 'start_date'],
    [{ domain_id: 'not-an-id' }, 'domain_id'],
    [{ start_date: '1990-01-01', dimensions: 'period', granularity: 'hourly' }, 'granularity'],
  ];
  for (const [query, param] of refused) {
    const r = await getMetrics(base, token, query);
    t.equal(r.status, 422, JSON.stringify(query));
    t.equal(r.body.name, 'invalid_parameter', JSON.stringify(query));
    t.equal(r.body.errors?.[0]?.path, param, JSON.stringify(query));
  }
});

t.test('a full_access key is needed; another team sees none of it', async (t) => {
  const sending = await app.newTeam('Sender only', 'sending_access');
  const r = await call(base, 'GET', '/emails/metrics', { token: sending.token });
  t.equal(r.status, 401);
  t.equal(r.body.name, 'restricted_api_key');
  const other = await app.newTeam('Other');
  const theirs = await getMetrics(base, other.token, { metrics: 'delivered', email_id: email.id });
  t.equal(theirs.body.totals.delivered, 0);
  const v1 = await call(base, 'GET', '/api/v1/emails/metrics?metrics=delivered', { token });
  t.equal(v1.body.totals.delivered, 2, 'served under /api/v1 too');
});
