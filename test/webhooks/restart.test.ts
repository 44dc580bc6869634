import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { startTestRedis } from '../helpers/redis.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { testClock } from '../helpers/test-clock.js';
import { verifyDelivery } from '../helpers/webhook-verify.js';
import { emitEvent } from '../../core/outbox/index.js';
import { fanOut } from '../../core/webhooks/fan-out.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { webhooksRepo } from '../../storage/repos/index.js';

// Deliveries live in SQLite: stopping the appliance mid-retry (and flushing Redis) loses no
// message and sends none twice; a claim left by a process that died is retried, with the same wh-id.
const dataDir = mkdtempSync(join(tmpdir(), 'svc-restart-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const redis = await startTestRedis();
t.teardown(() => redis.stop());
const receiver = await startWebhookReceiver();
t.teardown(() => receiver.stop());
const clock = testClock();
const env = { SVC_DATA_DIR: dataDir, SVC_WEBHOOKS_ALLOW_PRIVATE: 'true', SVC_WEBHOOKS_TIMEOUT_MS: '2000' };
const data = (id: string) => ({ email_id: id, from: 'a@s.test', to: ['b@r.test'], subject: 's', message_id: `<${id}@svc>`, created_at: '2026-01-01T00:00:00.000Z' });

t.test('a restart mid-retry, with Redis flushed, neither loses nor repeats a message', async (t) => {
  const first = await startTestAppliance({ clock, redis, env });
  const team = await first.newTeam('Restart');
  const created = await call(first.baseUrl, 'POST', '/webhooks', { token: team.token, body: { endpoint: `${receiver.url}/restart`, events: ['email.sent'] } });
  const db = first.appliance.services.database.db;
  receiver.script('/restart', [{ status: 500 }, { status: 502 }]);
  await emitEvent(eventsRepo(db), team.teamId, 'email.sent', data('retrying'), clock.now());
  await first.appliance.services.webhookDispatcher.runDue();
  clock.advance(5_000);
  await first.appliance.services.webhookDispatcher.runDue();
  t.equal(receiver.at('/restart').length, 2, 'two failed attempts before the stop');

  await emitEvent(eventsRepo(db), team.teamId, 'email.sent', data('unseen'), clock.now());
  await first.appliance.services.webhookDispatcher.runDue();
  // Fanned out and claimed by a process that then "died": its lease is still running.
  await emitEvent(eventsRepo(db), team.teamId, 'email.sent', data('claimed-by-dead'), clock.now());
  await fanOut(db, clock);
  const now = clock.now();
  const dead = await webhooksRepo(db).claim(created.body.id, now.toISOString(), 'dead-process', new Date(now.getTime() + 330_000).toISOString(), 10);
  t.same(dead.map((m) => m.event_type), ['email.sent'], 'the dead process holds one message');
  // Written but never fanned out before the stop.
  await emitEvent(eventsRepo(db), team.teamId, 'email.sent', data('not-fanned-out'), clock.now());
  await first.stop();

  clock.advance(300_000);
  const second = await startTestAppliance({ clock, redis, env });
  t.teardown(() => second.stop());
  await second.appliance.services.redis.flushall();
  await second.appliance.services.webhookDispatcher.runDue();
  const held = receiver.at('/restart').filter((g) => JSON.parse(g.body).data.email_id === 'claimed-by-dead');
  t.equal(held.length, 0, 'a claim is left alone while its lease runs');
  clock.advance(60_000);
  await second.appliance.services.webhookDispatcher.runDue();
  clock.advance(100 * 3_600_000);
  await second.appliance.services.webhookDispatcher.runDue();

  const got = receiver.at('/restart');
  const ids = (email: string) => got.filter((g) => JSON.parse(g.body).data.email_id === email).map((g) => g.headers['wh-id']);
  t.equal(ids('retrying').length, 3, 'the retried message: two failures, then one success after the restart');
  t.equal(new Set(ids('retrying')).size, 1, 'with one wh-id');
  t.equal(ids('unseen').length, 1, 'the one delivered before the stop is not sent again');
  t.equal(ids('not-fanned-out').length, 1, 'the event not yet fanned out is delivered once');
  t.equal(ids('claimed-by-dead').length, 1, 'the dead claim is retried once its lease ran out');
  t.equal(got.length, 6);
  for (const g of got) verifyDelivery(created.body.signing_secret, g, { now: () => new Date(Number(g.headers['wh-timestamp']) * 1000) });
  const messages = (await call(second.baseUrl, 'GET', `/webhooks/${created.body.id}/events`, { token: team.token })).body.data;
  t.same(messages.map((m: { status: string }) => m.status), ['success', 'success', 'success', 'success']);
  const attempts = (await call(second.baseUrl, 'GET', `/webhooks/${created.body.id}/attempts?limit=100`, { token: team.token })).body.data;
  t.equal(attempts.length, 6, 'every attempt on either side of the restart is recorded');
});
