import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { testClock } from '../helpers/test-clock.js';
import { fakeEmail, getMetrics, series, writeEmailEvent } from '../helpers/metrics-fixtures.js';

// Periods in IANA timezones: day, week and month boundaries follow the zone's calendar across
// DST changes; hourly buckets keep the repeated hour of a fall-back apart. Events go into the
// outbox with the sending code's data shapes, at chosen instants.
const clock = testClock(new Date('2026-12-01T12:00:30.000Z'));
const app = await startTestAppliance({ clock, env: { SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
t.teardown(() => app.stop());
const db = app.appliance.services.database.db;
const base = app.baseUrl;

async function teamWith(deliveredAt: string[]) {
  const team = await app.newTeam('Periods');
  for (const at of deliveredAt) await writeEmailEvent(db, team.teamId, 'email.delivered', fakeEmail(), at);
  return team;
}

t.test('America/New_York daily across the spring-forward day (2026-03-08 has 23 hours)', async (t) => {
  const { token } = await teamWith([
    '2026-03-08T04:30:00Z', // 03-07 23:30 EST
    '2026-03-08T05:30:00Z', // 03-08 00:30 EST
    '2026-03-09T03:30:00Z', // 03-08 23:30 EDT
    '2026-03-09T04:30:00Z', // 03-09 00:30 EDT
  ]);
  const ny = await getMetrics(base, token, { start_date: '2026-03-07', end_date: '2026-03-09', timezone: 'America/New_York', dimensions: 'period', metrics: 'delivered' });
  t.equal(ny.status, 200, JSON.stringify(ny.body));
  t.same(series(ny.body, 'delivered'), [
    ['2026-03-07T00:00:00-05:00', 1],
    ['2026-03-08T00:00:00-05:00', 2],
    ['2026-03-09T00:00:00-04:00', 1],
  ]);
  t.equal(ny.body.start_date, '2026-03-07T05:00:00.000Z');
  t.equal(ny.body.end_date, '2026-03-10T04:00:00.000Z', 'a date as end_date includes that whole local day');
  t.equal(ny.body.totals.delivered, 4);
  const utc = await getMetrics(base, token, { start_date: '2026-03-07', end_date: '2026-03-09', dimensions: 'period', metrics: 'delivered' });
  t.same(series(utc.body, 'delivered'), [['2026-03-07T00:00:00Z', 0], ['2026-03-08T00:00:00Z', 2], ['2026-03-09T00:00:00Z', 2]], 'the same events in UTC days');
});

t.test('America/New_York hourly: the skipped 02:00 and the repeated 01:00', async (t) => {
  const { token } = await teamWith([
    '2026-03-08T06:59:00Z', // 01:59 EST
    '2026-03-08T07:00:00Z', // 03:00 EDT (02:00 does not exist)
    '2026-11-01T05:30:00Z', // 01:30 EDT
    '2026-11-01T06:30:00Z', // 01:30 EST, the second 01:00 hour
    '2026-11-01T06:45:00Z',
  ]);
  const spring = await getMetrics(base, token, { start_date: '2026-03-08T00:00:00', end_date: '2026-03-08T04:00:00', timezone: 'America/New_York', dimensions: 'period', granularity: 'hourly', metrics: 'delivered' });
  t.same(series(spring.body, 'delivered'), [
    ['2026-03-08T00:00:00-05:00', 0],
    ['2026-03-08T01:00:00-05:00', 1],
    ['2026-03-08T03:00:00-04:00', 1],
  ], 'local date-times without an offset are read in the timezone; 02:00 never happens');
  const fall = await getMetrics(base, token, { start_date: '2026-11-01T00:00:00-04:00', end_date: '2026-11-01T03:00:00-05:00', timezone: 'America/New_York', dimensions: 'period', granularity: 'hourly', metrics: 'delivered' });
  t.same(series(fall.body, 'delivered'), [
    ['2026-11-01T00:00:00-04:00', 0],
    ['2026-11-01T01:00:00-04:00', 1],
    ['2026-11-01T01:00:00-05:00', 2],
    ['2026-11-01T02:00:00-05:00', 0],
  ], 'the hour that happens twice is two buckets, told apart by their offsets');
});

t.test('America/New_York: 2026-11-01 is one 25-hour day', async (t) => {
  const { token } = await teamWith(['2026-11-01T04:30:00Z', '2026-11-02T04:30:00Z', '2026-11-02T05:30:00Z']);
  const r = await getMetrics(base, token, { start_date: '2026-11-01', end_date: '2026-11-02', timezone: 'America/New_York', dimensions: 'period', metrics: 'delivered' });
  t.same(series(r.body, 'delivered'), [['2026-11-01T00:00:00-04:00', 2], ['2026-11-02T00:00:00-05:00', 1]]);
});

t.test('Europe/Berlin daily around both 2026 changes', async (t) => {
  const { token } = await teamWith([
    '2026-03-28T23:30:00Z', // 03-29 00:30 CET
    '2026-03-29T21:30:00Z', // 03-29 23:30 CEST
    '2026-03-29T22:30:00Z', // 03-30 00:30 CEST
    '2026-10-24T22:30:00Z', // 10-25 00:30 CEST
    '2026-10-25T22:30:00Z', // 10-25 23:30 CET
    '2026-10-25T23:30:00Z', // 10-26 00:30 CET
  ]);
  const spring = await getMetrics(base, token, { start_date: '2026-03-29', end_date: '2026-03-30', timezone: 'Europe/Berlin', dimensions: 'period', metrics: 'delivered' });
  t.same(series(spring.body, 'delivered'), [['2026-03-29T00:00:00+01:00', 2], ['2026-03-30T00:00:00+02:00', 1]]);
  const autumn = await getMetrics(base, token, { start_date: '2026-10-25', end_date: '2026-10-26', timezone: 'Europe/Berlin', dimensions: 'period', metrics: 'delivered' });
  t.same(series(autumn.body, 'delivered'), [['2026-10-25T00:00:00+02:00', 2], ['2026-10-26T00:00:00+01:00', 1]]);
});

t.test('weekly buckets start on Monday in the timezone; monthly follow its calendar', async (t) => {
  const { token } = await teamWith([
    '2026-03-02T04:30:00Z', // Sunday 03-01 23:30 EST: the week of Monday 02-23
    '2026-03-02T05:30:00Z', // Monday 03-02 00:30 EST
    '2026-03-09T03:59:00Z', // Sunday 03-08 23:59 EDT
    '2026-04-01T03:30:00Z', // 03-31 23:30 EDT: March in New York, April in UTC
  ]);
  const weekly = await getMetrics(base, token, { start_date: '2026-03-01', end_date: '2026-03-15', timezone: 'America/New_York', dimensions: 'period', granularity: 'weekly', metrics: 'delivered' });
  t.same(series(weekly.body, 'delivered'), [
    ['2026-02-23T00:00:00-05:00', 1],
    ['2026-03-02T00:00:00-05:00', 2],
    ['2026-03-09T00:00:00-04:00', 0],
  ], 'a bucket may start before the window; it counts only what the window holds');
  const monthly = await getMetrics(base, token, { start_date: '2026-02-01', end_date: '2026-04-30', timezone: 'America/New_York', dimensions: 'period', granularity: 'monthly', metrics: 'delivered' });
  t.same(series(monthly.body, 'delivered'), [['2026-02-01T00:00:00-05:00', 0], ['2026-03-01T00:00:00-05:00', 4], ['2026-04-01T00:00:00-04:00', 0]]);
  const utc = await getMetrics(base, token, { start_date: '2026-02-01', end_date: '2026-04-30', dimensions: 'period', granularity: 'monthly', metrics: 'delivered' });
  t.same(series(utc.body, 'delivered'), [['2026-02-01T00:00:00Z', 0], ['2026-03-01T00:00:00Z', 3], ['2026-04-01T00:00:00Z', 1]]);
  t.equal(weekly.body.granularity, 'weekly');
});

t.test('zones with half- and quarter-hour offsets bucket on their own hours', async (t) => {
  const { token } = await teamWith(['2026-05-10T18:14:00Z', '2026-05-10T18:16:00Z']); // Kathmandu +05:45: 23:59 and 00:01
  const r = await getMetrics(base, token, { start_date: '2026-05-10', end_date: '2026-05-11', timezone: 'Asia/Kathmandu', dimensions: 'period', metrics: 'delivered' });
  t.same(series(r.body, 'delivered'), [['2026-05-10T00:00:00+05:45', 1], ['2026-05-11T00:00:00+05:45', 1]]);
  const hourly = await getMetrics(base, token, { start_date: '2026-05-10T23:00:00', end_date: '2026-05-11T01:00:00', timezone: 'Asia/Kathmandu', dimensions: 'period', granularity: 'hourly', metrics: 'delivered' });
  t.same(series(hourly.body, 'delivered'), [['2026-05-10T23:00:00+05:45', 1], ['2026-05-11T00:00:00+05:45', 1]]);
});

t.test('a day without a midnight (Santiago) and a 30-minute change (Lord Howe) still make whole buckets', async (t) => {
  const { token } = await teamWith(['2026-09-06T04:30:00Z', '2026-09-06T15:30:00Z', '2026-04-04T14:45:00Z']);
  const santiago = await getMetrics(base, token, { start_date: '2026-09-05', end_date: '2026-09-07', timezone: 'America/Santiago', dimensions: 'period', metrics: 'delivered' });
  t.same(series(santiago.body, 'delivered'), [
    ['2026-09-05T00:00:00-04:00', 0],
    ['2026-09-06T01:00:00-03:00', 2], // 04:30Z is 01:30 -03 (00:00 -04 became 01:00 -03), 15:30Z is 12:30
    ['2026-09-07T00:00:00-03:00', 0],
  ], 'clocks go from 00:00 to 01:00 on 09-06: that day starts at 01:00, the next at midnight again');
  const lordHowe = await getMetrics(base, token, { start_date: '2026-04-05T00:00:00+11:00', end_date: '2026-04-05T03:00:00+10:30', timezone: 'Australia/Lord_Howe', dimensions: 'period', granularity: 'hourly', metrics: 'delivered' });
  t.same(series(lordHowe.body, 'delivered'), [
    ['2026-04-05T00:00:00+11:00', 0],
    ['2026-04-05T01:00:00+11:00', 1], // 2026-04-04T14:45Z is 01:45 +11
    ['2026-04-05T01:30:00+10:30', 0], // the half hour that happens twice
    ['2026-04-05T02:00:00+10:30', 0],
  ]);
});
