import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { testClock } from '../helpers/test-clock.js';
import { emitEvent } from '../../core/outbox/index.js';
import { pruneEvents } from '../../core/retention/events.js';
import { pruneWebhookMessages } from '../../core/webhooks/retention.js';
import { fanOut } from '../../core/webhooks/fan-out.js';
import { pruneEventsJob } from '../../jobs/retention.js';
import { eventsRepo } from '../../storage/repos/index.js';

// Outbox pruning: an event goes only once both consumers (webhook fan-out, metrics rollup) have
// read it, no webhook message refers to it, and it is older than the window.

const DAY = 86_400_000;
const receiver = await startWebhookReceiver();
t.teardown(() => receiver.stop());
const clock = testClock();
const app = await startTestAppliance({ clock, env: { SVC_WEBHOOKS_ALLOW_PRIVATE: 'true' } });
t.teardown(() => app.stop());
const services = app.appliance.services;
const db = services.database.db;
const sqlite = services.database.sqlite;
const eventIds = () => (sqlite.prepare('select id from events order by seq').all() as { id: string }[]).map((r) => r.id);
const emit = (teamId: string, marker: string) => emitEvent(eventsRepo(db), teamId, 'email.sent', { email_id: marker }, clock.now());
const rollup = () => services.metricsRollup.catchUp();

t.test('deleted: read by every consumer, unreferenced, past the window; everything else stays', async (t) => {
  const hooked = await app.newTeam('Hooked');
  const quiet = await app.newTeam('Quiet');
  const hook = (await call(app.baseUrl, 'POST', '/webhooks', { token: hooked.token, body: { endpoint: `${receiver.url}/ev`, events: ['email.sent'] } })).body;
  receiver.script('/ev', [{ status: 200 }, { status: 503 }]);

  const unreferenced = await emit(quiet.teamId, 'no endpoint');
  const delivered = await emit(hooked.teamId, 'delivered');
  const retrying = await emit(hooked.teamId, 'retrying');
  await services.webhookDispatcher.runDue();
  await rollup();
  const behindRollup = await emit(quiet.teamId, 'behind the rollup');
  await fanOut(db, clock); // the dispatcher reads it; the metrics rollup has not yet
  const messages = (await call(app.baseUrl, 'GET', `/webhooks/${hook.id}/events`, { token: hooked.token })).body.data as { id: string; status: string }[];
  t.same(messages.map((m) => m.status).sort(), ['attempting', 'success'], 'one message delivered, one waiting for its retry');

  clock.advance(29 * DAY);
  t.match(await pruneEvents(db, clock, 30), { deleted: 0 }, 'nothing is 30 days old yet');

  clock.advance(2 * DAY);
  const first = await pruneEvents(db, clock, 30);
  t.match(first, { deleted: 1, kept_referenced: 2 }, 'only the event nobody needs');
  t.notOk(eventIds().includes(unreferenced), 'read by both consumers, no message, 31 days old: deleted');
  t.ok(eventIds().includes(behindRollup), 'kept: the metrics rollup has not read it, whatever its age');
  t.ok(eventIds().includes(delivered), 'kept: its delivered message is still listed (webhooks_retention_days)');
  t.ok(eventIds().includes(retrying), 'kept: its message is still being retried');

  const recent = await emit(quiet.teamId, 'recent');
  await fanOut(db, clock);
  await rollup();
  t.match(await pruneEvents(db, clock, 30), { deleted: 1 }, 'once the rollup read it, the old event goes');
  t.notOk(eventIds().includes(behindRollup));
  t.ok(eventIds().includes(recent), 'kept: read by both consumers but inside the window');

  t.equal(await pruneWebhookMessages(db, clock, 30), 1, 'the delivered message ages out of its own retention');
  t.match(await pruneEvents(db, clock, 30), { deleted: 1, kept_referenced: 1 }, 'and frees its event');
  t.notOk(eventIds().includes(delivered));
  t.ok(eventIds().includes(retrying), 'the retried message still refers to its event');
  await services.webhookDispatcher.runDue();
  const retried = receiver.at('/ev').at(-1)!;
  t.match(JSON.parse(retried.body), { type: 'email.sent', data: { email_id: 'retrying' } }, 'the retry 31 days later still sends the event');

  clock.advance(31 * DAY);
  t.match(await pruneEvents(db, clock, 30), { deleted: 1, kept_referenced: 1 }, 'the recent event is old now; the retried one is still referenced');
  t.notOk(eventIds().includes(recent));
  const retriedMessage = messages.find((m) => m.status === 'attempting')!;
  const replay = await call(app.baseUrl, 'POST', `/webhooks/${hook.id}/events/${retriedMessage.id}/replay`, { token: hooked.token });
  t.equal(replay.status, 200, 'a finished message 31 days old can be replayed: its event is still there');
  await services.webhookDispatcher.runDue();
  t.match(JSON.parse(receiver.at('/ev').at(-1)!.body), { data: { email_id: 'retrying' } }, 'the replay sends the same event');
  const shown = await call(app.baseUrl, 'GET', `/webhooks/${hook.id}/events/${retriedMessage.id}`, { token: hooked.token });
  t.match(shown.body, { payload: { data: { email_id: 'retrying' } } }, 'the message still shows its payload');
});

t.test('seq is never reused after deletes: a new endpoint starts after the newest event ever written', async (t) => {
  const highest = (sqlite.prepare("select seq from sqlite_sequence where name = 'events'").get() as { seq: number }).seq;
  const team = await app.newTeam('Later');
  const hook = (await call(app.baseUrl, 'POST', '/webhooks', { token: team.token, body: { endpoint: `${receiver.url}/later`, events: ['email.sent'] } })).body;
  const id = await emit(team.teamId, 'after the prune');
  const row = sqlite.prepare('select seq from events where id = ?').get(id) as { seq: number };
  t.ok(row.seq > highest, `the new event's seq ${row.seq} follows the highest ever written (${highest}), deleted or not`);
  await services.webhookDispatcher.runDue();
  const sent = receiver.at('/later').map((r) => JSON.parse(r.body) as { data: { email_id: string } });
  t.same(sent.map((b) => b.data.email_id), ['after the prune'], 'the new endpoint gets the new event and nothing older');
  void hook;
});

t.test('the job reports its counts; the delete walks messages by index, not by scan', async (t) => {
  const reader = await app.newTeam('Reader');
  const old = await emit(reader.teamId, 'old');
  await fanOut(db, clock);
  await rollup();
  clock.advance(31 * DAY);
  sqlite.prepare("insert into outbox_cursors (name, seq) values ('another-reader', 0)").run();
  t.match(await pruneEvents(db, clock, 30), { deleted: 0, cursor: 0 }, 'a cursor row of any other reader holds back what it has not read');
  sqlite.prepare("delete from outbox_cursors where name = 'another-reader'").run();
  const job = pruneEventsJob({ db, clock }, 30);
  t.equal(job.name, 'prune-events');
  t.match(await job.run(), { deleted: 1, kept_referenced: 2 }, 'the old event goes; the two with webhook messages stay');
  t.notOk(eventIds().includes(old));
  const plan = sqlite.prepare(`explain query plan delete from events where seq > 0 and seq <= 10 and created_at < '2100'
    and not exists (select 1 from webhook_endpoints as e inner join webhook_deliveries as d on d.endpoint_id = e.id
    where e.team_id = events.team_id and d.event_id = events.id)`).all() as { detail: string }[];
  const details = plan.map((p) => p.detail).join('\n');
  t.notMatch(details, /SCAN (d|webhook_deliveries)\b/, `no scan of webhook_deliveries:\n${details}`);
  t.match(details, /webhook_deliveries_endpoint_event/, 'the (endpoint_id, event_id) index');
});
