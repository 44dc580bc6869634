import t from 'tap';
import { eventsOf } from '../helpers/email-fixtures.js';
import { call } from '../helpers/http.js';
import { getMetrics } from '../helpers/metrics-fixtures.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { startTrackingRig, trackingLinks } from '../helpers/tracking.js';

// The basic tracking flow with SVC_DATABASE_URL naming a fresh PostgreSQL database: a tracked
// send delivered to the fake MX, a click and an open, their events, last_event and the metrics
// (migration 020's columns on PostgreSQL), and a forged token refused.
const pg = await createTestDatabase();
const rig = await startTrackingRig({ databaseUrl: pg.url });
t.teardown(async () => { await rig.stop(); await pg.drop(); });
const { app, clock, team, tracking } = rig;
const browser = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

t.test('tracking on PostgreSQL: click, open, events, last_event, metrics', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  const id = await rig.send({ to: 'ann@inbox-one.net', html: '<p><a href="https://shop.example/pg">shop</a></p>', text: 'shop' });
  await rig.until(id, 'delivered');
  const links = trackingLinks((await rig.received('ann@inbox-one.net', id)).html);
  t.equal(links.clicks.length, 1);
  clock.advance(60_000);
  const click = await fetch(links.clicks[0]!, { redirect: 'manual', headers: { 'user-agent': browser } });
  t.equal(click.status, 302);
  t.equal(click.headers.get('location'), 'https://shop.example/pg');
  clock.advance(10_000);
  t.equal((await fetch(links.pixel!, { headers: { 'user-agent': browser } })).status, 200);
  t.equal((await fetch(`${links.clicks[0]!.slice(0, -2)}xx`, { redirect: 'manual' })).status, 404, 'an altered token');
  await tracking.flush();
  const hits = (await eventsOf(app, id)).filter((e) => e.type === 'email.opened' || e.type === 'email.clicked');
  t.same(hits.map((e) => e.type), ['email.clicked', 'email.opened']);
  t.match(hits[0]!.data, { to: ['ann@inbox-one.net'], click: { link: 'https://shop.example/pg', userAgent: browser, machine: false } });
  t.equal((await call(app.baseUrl, 'GET', `/emails/${id}`, { token: team.token })).body.last_event, 'opened');
  clock.advance(120_000);
  const m = await getMetrics(app.baseUrl, team.token, { email_id: id, metrics: 'opened,clicked,unique_opened,unique_clicked', exclude_machine: 'true' });
  t.same(m.body.totals, { opened: 1, clicked: 1, unique_opened: 1, unique_clicked: 1 }, JSON.stringify(m.body));
});
