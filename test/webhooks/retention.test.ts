import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { testClock } from '../helpers/test-clock.js';
import { emitEvent } from '../../core/outbox/index.js';
import { pruneWebhookMessages } from '../../core/webhooks/retention.js';
import { pruneWebhookMessagesJob } from '../../jobs/webhook-dispatch-prune.js';
import { eventsRepo } from '../../storage/repos/index.js';

const receiver = await startWebhookReceiver();
t.teardown(() => receiver.stop());
const clock = testClock();
const app = await startTestAppliance({ clock, env: { SVC_WEBHOOKS_ALLOW_PRIVATE: 'true' } });
t.teardown(() => app.stop());
const db = app.appliance.services.database.db;

t.test('finished messages past the retention window go with their attempts; waiting ones stay', async (t) => {
  const team = await app.newTeam('Retention');
  const hook = (await call(app.baseUrl, 'POST', '/webhooks', { token: team.token, body: { endpoint: `${receiver.url}/keep`, events: ['email.sent'] } })).body;
  receiver.script('/keep', [{ status: 200 }, { status: 500, headers: { 'webhook-delivery': 'abort-message' } }, { status: 503 }]);
  for (const id of ['ok', 'aborted', 'waiting']) {
    await emitEvent(eventsRepo(db), team.teamId, 'email.sent', { email_id: id }, clock.now());
    await app.appliance.services.webhookDispatcher.runDue();
  }
  const count = (sql: string) => (app.appliance.services.database.sqlite.prepare(sql).get() as { n: number }).n;
  t.equal(count('select count(*) as n from webhook_deliveries'), 3);

  clock.advance(29 * 86_400_000);
  t.equal(await pruneWebhookMessages(db, clock, 30), 0, 'nothing is 30 days old yet');
  clock.advance(2 * 86_400_000);
  t.equal(await pruneWebhookMessages(db, clock, 30), 2, 'the delivered and the failed message');
  const left = (await call(app.baseUrl, 'GET', `/webhooks/${hook.id}/events`, { token: team.token })).body.data;
  t.same(left.map((m: { status: string }) => m.status), ['attempting'], 'the message still being retried stays');
  t.equal(count('select count(*) as n from webhook_attempts'), 1, 'attempts of removed messages are gone');
  const job = pruneWebhookMessagesJob(db, clock, 30);
  t.equal(job.name, 'prune-webhook-messages');
  t.equal(await job.run(), 0);
});
