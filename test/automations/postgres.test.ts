import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { testClock } from '../helpers/test-clock.js';

// Custom events and automations with SVC_DATABASE_URL naming a fresh PostgreSQL database: the
// live-name rule, enrolment once per event, a run parked on a delay and woken by the moved clock.
const pg = await createTestDatabase();
const clock = testClock();
const app = await startTestAppliance({ databaseUrl: pg.url, clock });
t.teardown(async () => { await app.stop(); await pg.drop(); });
const team = await app.newTeam('Pg automations');
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });

t.test('events and a delayed run on PostgreSQL', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  t.equal((await api('POST', '/events', { name: 'pg.event' })).status, 201);
  t.equal((await api('POST', '/events', { name: 'pg.event' })).status, 422, 'a live name is held');
  const contact = (await api('POST', '/contacts', { email: 'pg-run@example.com' })).body.id;
  const automation = await api('POST', '/automations', {
    name: 'Pg flow', status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'pg.event' } },
      { key: 'wait', type: 'delay', config: { duration: '1 day' } },
      { key: 'tag', type: 'contact_update', config: { first_name: 'Waited' } },
    ],
    connections: [{ from: 'start', to: 'wait' }, { from: 'wait', to: 'tag' }],
  });
  t.equal(automation.status, 201, JSON.stringify(automation.body));
  t.equal((await api('POST', '/events/send', { event: 'pg.event', contact_id: contact })).status, 202);
  t.equal((await api('POST', '/events/send', { event: 'store:order.paid', contact_id: contact, idempotency_key: 'k' })).status, 202);
  t.equal((await api('POST', '/events/send', { event: 'store:order.paid', contact_id: contact, idempotency_key: 'k' })).status, 202);
  const work = app.appliance.services.work;
  while ((await work.runDue()) > 0);
  const [run] = (await api('GET', `/automations/${automation.body.id}/runs?status=running`)).body.data;
  t.ok(run, 'parked on the delay');
  clock.advance(86_400_000 + 1000);
  while ((await work.runDue()) > 0);
  t.equal((await api('GET', `/automations/${automation.body.id}/runs/${run.id}`)).body.status, 'completed');
  t.equal((await api('GET', `/contacts/${contact}`)).body.first_name, 'Waited');
});
