import t from 'tap';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { envelopeData } from '../../core/emails/envelope.js';
import { emitEvent, type EventType } from '../../core/outbox/index.js';
import { metricsRollup } from '../../core/metrics/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { waitFor, withDeadline } from '../helpers/deadline.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { testClock } from '../helpers/test-clock.js';
import { bounceOf, fakeEmail, getMetrics } from '../helpers/metrics-fixtures.js';

// The rollup folds every outbox event exactly once: three processes folding the same outbox at
// once (the appliance and two others on the same SQLite file) split the events between them and
// the totals come out exact; a later pass finds nothing; the jobs role's loop keeps it current.
const clock = testClock(new Date('2026-05-20T12:00:30.000Z'));
const app = await startTestAppliance({
  clock, env: { SVC_METRICS_QUERY_CATCH_UP_EVENTS: '0', SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' },
});
t.teardown(() => app.stop());
const db = app.appliance.services.database.db;
const base = app.baseUrl;
const { token, teamId } = await app.newTeam('Rollup');

interface Planned { type: EventType; at: string; extra?: Record<string, unknown> }

/** 1,500 emails over three days, each sent and delivered, some opened twice, clicked, bounced; and received mail. */
function plan(): { events: [ReturnType<typeof fakeEmail>, Planned][]; expected: Record<string, number> } {
  const events: [ReturnType<typeof fakeEmail>, Planned][] = [];
  const expected = { sent: 0, delivered: 0, opened: 0, unique_opened: 0, clicked: 0, unique_clicked: 0, bounced: 0, bounced_permanent: 0, received: 0, attempted: 0 };
  const start = Date.parse('2026-05-18T00:00:00Z');
  for (let i = 0; i < 1500; i++) {
    const email = fakeEmail();
    const at = (minutes: number) => new Date(start + (i * 2 + minutes) * 60_000).toISOString();
    events.push([email, { type: 'email.sent', at: at(0) }]);
    expected.sent++; expected.attempted++;
    if (i % 7 === 0) {
      events.push([email, { type: 'email.bounced', at: at(1), extra: bounceOf('Permanent') }]);
      expected.bounced++; expected.bounced_permanent++;
      continue;
    }
    events.push([email, { type: 'email.delivered', at: at(1) }]);
    expected.delivered++;
    if (i % 3 === 0) {
      events.push([email, { type: 'email.opened', at: at(5) }], [email, { type: 'email.opened', at: at(600) }]);
      expected.opened += 2; expected.unique_opened++;
    }
    if (i % 5 === 0) {
      events.push([email, { type: 'email.clicked', at: at(6) }]);
      expected.clicked++; expected.unique_clicked++;
    }
    if (i % 10 === 0) {
      events.push([fakeEmail(), { type: 'email.received', at: at(3) }]);
      expected.received++;
    }
  }
  return { events, expected };
}

const { events, expected } = plan();
await inTransaction(db, async (trx) => {
  for (const [email, e] of events) {
    const to = (JSON.parse(email.to_json) as { address: string }[]).map((m) => m.address);
    const data = e.type === 'email.sent' ? envelopeData(email) : envelopeData(email, to, e.extra ?? {});
    await emitEvent(eventsRepo(trx), teamId, e.type, data, new Date(e.at));
  }
});
const metricsQuery = { start_date: '2026-05-18', end_date: '2026-05-20', metrics: Object.keys(expected).join(',') };

t.test('before any rollup: nothing counted, data_as_of is the oldest pending minute', async (t) => {
  const r = await getMetrics(base, token, metricsQuery);
  t.equal(r.status, 200);
  t.ok(Object.values(r.body.totals).every((v) => v === 0));
  t.equal(r.body.data_as_of, '2026-05-18T00:00:00.000Z');
});

t.test('three processes folding at once: each event once, totals exact', async (t) => {
  const child = join(import.meta.dirname, '../helpers/rollup-child.js');
  const dbFile = join(app.config.data_dir, 'svc.sqlite');
  // Each child opens the database, says "ready", and starts folding when told: all three start together.
  const start = () => {
    const proc = spawn(process.execPath, [child, dbFile, '25'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    const said = new Promise<void>((resolve) => proc.stdout.on('data', (c: Buffer) => { out += c.toString(); if (out.startsWith('ready\n')) resolve(); }));
    const exited = new Promise<number>((resolve, reject) => {
      proc.on('error', reject);
      proc.on('exit', (code) => (code === 0 ? resolve(Number(out.slice('ready\n'.length).trim())) : reject(new Error(`rollup child exited ${code}`))));
    });
    // A child that cannot start or finish (a lock never granted) fails the test instead of hanging it.
    const bounded = <T>(what: string, p: Promise<T>) => withDeadline(what, p, 60_000).catch((err: unknown) => { proc.kill('SIGKILL'); throw err; });
    const ready = bounded('a rollup child to say ready', Promise.race([said, exited.then(() => { throw new Error(`rollup child exited before ready: ${out}`); })]));
    return { ready, done: () => bounded('a rollup child to finish folding', exited), go: () => proc.stdin.end('go\n') };
  };
  const children = [start(), start()];
  await Promise.all(children.map((c) => c.ready));
  const own = metricsRollup({ db, batchSize: 25 });
  for (const c of children) c.go();
  const [a, b, c] = await Promise.all([...children.map((ch) => ch.done()), own.catchUp().then((r) => r.events)]);
  const total = (await eventsRepo(db).after(0, 1_000_000)).length;
  t.equal(a + b + c, total, `every outbox event folded by exactly one process (${a} + ${b} + ${c})`);
  const r = await getMetrics(base, token, metricsQuery);
  t.same(r.body.totals, expected);
  t.equal(r.body.data_as_of, '2026-05-20T12:00:00.000Z', 'caught up: the last completed minute');
  const again = await metricsRollup({ db, batchSize: 100 }).catchUp();
  t.same(again, { events: 0, caughtUp: true }, 'a fresh rollup (a restart) resumes at the stored position');
  const days = await getMetrics(base, token, { ...metricsQuery, dimensions: 'period', metrics: 'delivered,unique_opened' });
  const sum = (name: string) => (days.body.data as any[]).reduce((n, row) => n + row[name], 0);
  t.equal(sum('delivered'), expected.delivered, 'the days add up to the totals');
  t.equal(sum('unique_opened'), expected.unique_opened, 'unique opens too: each email counted on one day only');
});

t.test("the jobs role's loop keeps the rollups current without a request folding", async (t) => {
  const jobs = await startTestAppliance({
    clock, roles: ['api', 'jobs'],
    env: { SVC_METRICS_QUERY_CATCH_UP_EVENTS: '0', SVC_METRICS_ROLLUP_INTERVAL_MS: '100', SVC_DOMAINS_RECHECK_CRON: '0 0 1 1 *' },
  });
  t.teardown(() => jobs.stop());
  const other = await jobs.newTeam('Loop');
  const email = fakeEmail();
  await inTransaction(jobs.appliance.services.database.db, async (trx) => {
    await emitEvent(eventsRepo(trx), other.teamId, 'email.delivered', envelopeData(email, ['reader@inbox-one.net']), new Date('2026-05-20T11:00:00Z'));
  });
  // The rollup item parks between folds for the rollup interval on the appliance's clock, which
  // this test holds still: past the interval, the loop's next poll finds it due.
  clock.advance(200);
  const r = await waitFor('the loop to fold the event', async () => {
    const m = await getMetrics(jobs.baseUrl, other.token, { metrics: 'delivered' });
    return m.body.totals.delivered === 1 ? m : undefined;
  });
  t.equal(r.body.totals.delivered, 1);
});
