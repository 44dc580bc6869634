import t from 'tap';
import { PLATFORM_STREAM_WORK } from '../../core/automations/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { publishedTemplate } from '../helpers/templates.js';
import { waitFor } from '../helpers/deadline.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';

// A flow end to end with a clock the test moves: trigger → delay (3 days) → condition →
// send_email (met) or contact_update (not met). The durable worker is driven by hand
// (`runDue`), the mail goes through the ordinary send path to a fake MX found over DNS.
const dns = await mailZone();
const mx = await startFakeMx({ dns: dns.address });
const clock = testClock();
const app = await startTestAppliance({
  clock, roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_WEBHOOKS_ALLOW_PRIVATE: 'true' },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); });
const team = await app.newTeam('Flows');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });
const work = app.appliance.services.work;
const db = app.appliance.services.database.db;
const TEMPLATE = await publishedTemplate(app.baseUrl, team.token, { html: '<p>Your plan: {{plan}}. <a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>', variables: [{ key: 'plan', type: 'string', fallback_value: '' }] });

const flow = (eventName: string) => ({
  name: 'Trial nurture', status: 'enabled',
  steps: [
    { key: 'start', type: 'trigger', config: { event_name: eventName } },
    { key: 'wait', type: 'delay', config: { duration: '3 days' } },
    { key: 'is_pro', type: 'condition', config: { type: 'rule', field: 'properties.plan', operator: 'eq', value: 'pro' } },
    { key: 'mail', type: 'send_email', config: { template: { id: TEMPLATE, variables: { plan: { var: 'event.plan' } } }, from: 'Acme <hello@sender.net>', subject: 'Your trial' } },
    { key: 'tag', type: 'contact_update', config: { properties: { tier: 'free' } } },
  ],
  connections: [
    { from: 'start', to: 'wait' },
    { from: 'wait', to: 'is_pro' },
    { from: 'is_pro', to: 'mail', type: 'condition_met' },
    { from: 'is_pro', to: 'tag', type: 'condition_not_met' },
  ],
});

async function drain(): Promise<number> {
  let total = 0;
  for (let steps = await work.runDue(); steps > 0; steps = await work.runDue()) total += steps;
  return total;
}

const runOf = async (automationId: string, runId: string) => (await api('GET', `/automations/${automationId}/runs/${runId}`)).body;

t.test('trigger → delay → condition → send_email runs end to end on a moved clock', async (t) => {
  t.equal((await api('POST', '/events', { name: 'trial.started', schema: { plan: 'string' } })).status, 201);
  const ann = (await api('POST', '/contacts', { email: 'ann@inbox-one.net', properties: { plan: 'pro' } })).body.id;
  const bob = (await api('POST', '/contacts', { email: 'bob@inbox-two.net', properties: { plan: 'basic' } })).body.id;
  // Run events are written for a team whose endpoint subscribes (no jobs role here: nothing is delivered).
  t.equal((await api('POST', '/webhooks', { endpoint: 'http://127.0.0.1:9/runs', events: ['automation.run.started', 'automation.run.completed'] })).status, 201);
  const created = await api('POST', '/automations', flow('trial.started'));
  t.equal(created.status, 201, JSON.stringify(created.body));
  const automationId = created.body.id;
  for (const contact of [ann, bob]) t.equal((await api('POST', '/events/send', { event: 'trial.started', contact_id: contact, payload: { plan: 'pro' } })).status, 202);
  t.ok(await drain() > 0);
  const runs = (await api('GET', `/automations/${automationId}/runs`)).body;
  t.equal(runs.data.length, 2, 'one run per contact per event');
  const runByContact = new Map<string, string>();
  for (const r of runs.data) runByContact.set((await runOf(automationId, r.id)).contact_id, r.id);
  const annRun = runByContact.get(ann)!;
  const parked = await runOf(automationId, annRun);
  t.equal(parked.status, 'running', 'a run parked on a delay is running');
  t.same(parked.steps.map((s: { key: string; status: string }) => [s.key, s.status]), [['start', 'completed'], ['wait', 'waiting'], ['is_pro', 'pending'], ['mail', 'pending'], ['tag', 'pending']]);
  clock.advance(3 * 86_400_000 - 60_000);
  t.equal(await drain(), 0, 'nothing wakes before its time');
  clock.advance(61_000);
  t.ok(await drain() > 0, 'the delay wakes at its time');
  const done = await runOf(automationId, annRun);
  t.equal(done.status, 'completed');
  t.same(done.steps.map((s: { key: string; status: string }) => [s.key, s.status]), [['start', 'completed'], ['wait', 'completed'], ['is_pro', 'completed'], ['mail', 'completed'], ['tag', 'skipped']]);
  const emailId = done.steps[3].output.email_id;
  await waitFor('the step\'s email at the fake MX', async () => mx.received.find((m) => m.rcptTo === 'ann@inbox-one.net'));
  t.equal(mx.received.filter((m) => m.rcptTo === 'ann@inbox-one.net').length, 1, 'sent exactly once');
  const raw = mx.received.find((m) => m.rcptTo === 'ann@inbox-one.net')!.raw.toString();
  t.match(raw, /^List-Unsubscribe:\s*<http/m, 'unsubscribe headers');
  t.match(raw, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m);
  t.match(raw, /plan: pro/, 'event data reaches the template');
  const email = await api('GET', `/emails/${emailId}`);
  t.equal(email.body.subject, 'Your trial');
  const bobRun = await runOf(automationId, runByContact.get(bob)!);
  t.equal(bobRun.status, 'completed');
  t.same(bobRun.steps.map((s: { key: string; status: string }) => [s.key, s.status]), [['start', 'completed'], ['wait', 'completed'], ['is_pro', 'completed'], ['mail', 'skipped'], ['tag', 'completed']]);
  t.same((await api('GET', `/contacts/${bob}`)).body.properties.tier, { type: 'string', value: 'free' }, 'contact_update created the property');
  const hooks = await db.selectFrom('events').select(['type', 'data']).where('team_id', '=', team.teamId).where('type', 'like', 'automation.run.%').orderBy('seq').execute();
  t.same(hooks.map((h) => h.type).sort(), ['automation.run.completed', 'automation.run.completed', 'automation.run.started', 'automation.run.started']);
  const completed = await api('GET', `/automations/${automationId}/runs?status=completed`);
  t.equal(completed.body.data.length, 2);
  t.equal((await api('GET', `/automations/${automationId}/runs?status=running,cancelled`)).body.data.length, 0);
  const bad = await api('GET', `/automations/${automationId}/runs?status=running,parked`);
  t.equal(bad.status, 422);
  t.equal(bad.body.name, 'invalid_parameter');
  t.match(bad.body.message, /parked/);
});

t.test('run events are written only for the types an enabled endpoint of the team subscribes to', async (t) => {
  const runEvents = async (teamId: string) => (await db.selectFrom('events').select('type')
    .where('team_id', '=', teamId).where('type', 'like', 'automation.run.%').execute()).map((e) => e.type);
  const teams = { none: await app.newTeam('No endpoint'), completed: await app.newTeam('Completed only'), disabled: await app.newTeam('Disabled endpoint') };
  const onlyCompleted = { endpoint: 'http://127.0.0.1:9/completed', events: ['automation.run.completed'] };
  t.equal((await call(app.baseUrl, 'POST', '/webhooks', { token: teams.completed.token, body: onlyCompleted })).status, 201);
  const disabled = await call(app.baseUrl, 'POST', '/webhooks', { token: teams.disabled.token, body: { ...onlyCompleted, events: ['automation.run.started', 'automation.run.completed'] } });
  t.equal((await call(app.baseUrl, 'PATCH', `/webhooks/${disabled.body.id}`, { token: teams.disabled.token, body: { status: 'disabled' } })).status, 200);
  for (const team of Object.values(teams)) {
    const as = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });
    t.equal((await as('POST', '/events', { name: 'plan.chosen' })).status, 201);
    const contact = (await as('POST', '/contacts', { email: 'eve@inbox-one.net' })).body.id;
    const automation = await as('POST', '/automations', {
      name: 'Tag', status: 'enabled',
      steps: [{ key: 'start', type: 'trigger', config: { event_name: 'plan.chosen' } }, { key: 'tag', type: 'contact_update', config: { properties: { tier: 'gold' } } }],
      connections: [{ from: 'start', to: 'tag' }],
    });
    t.equal(automation.status, 201, JSON.stringify(automation.body));
    t.equal((await as('POST', '/events/send', { event: 'plan.chosen', contact_id: contact })).status, 202);
    await drain();
    t.same((await as('GET', `/automations/${automation.body.id}/runs?status=completed`)).body.data.length, 1, 'the run completed');
  }
  t.same(await runEvents(teams.none.teamId), [], 'no endpoint: no run events');
  t.same(await runEvents(teams.completed.teamId), ['automation.run.completed'], 'only the subscribed type');
  t.same(await runEvents(teams.disabled.teamId), [], 'a disabled endpoint listens to nothing');
});

t.test('a PATCH publishes the next version; a running run keeps its own; stop and delete cancel', async (t) => {
  await api('POST', '/events', { name: 'lead.captured' });
  const cat = (await api('POST', '/contacts', { email: 'cat@inbox-one.net', properties: { plan: 'pro' } })).body.id;
  const automationId = (await api('POST', '/automations', flow('lead.captured'))).body.id;
  await api('POST', '/events/send', { event: 'lead.captured', contact_id: cat });
  await drain();
  const [first] = (await api('GET', `/automations/${automationId}/runs`)).body.data;
  const next = flow('lead.captured');
  next.steps[1]!.config = { duration: '1 hour' };
  t.equal((await api('PATCH', `/automations/${automationId}`, { steps: next.steps, connections: next.connections })).status, 200);
  const got = (await api('GET', `/automations/${automationId}`)).body;
  t.equal(got.version, 2);
  t.same(got.steps[1].config, { duration: '1 hour' });
  t.equal((await runOf(automationId, first.id)).version, 1, 'the run keeps its version');
  await api('POST', '/events/send', { event: 'lead.captured', contact_id: cat });
  await drain();
  const runs = (await api('GET', `/automations/${automationId}/runs?status=running`)).body.data;
  t.equal(runs.length, 2, 'two sends are two runs');
  t.equal((await api('PATCH', `/automations/${automationId}`, { status: 'disabled' })).status, 200);
  await api('POST', '/events/send', { event: 'lead.captured', contact_id: cat });
  await drain();
  t.equal((await api('GET', `/automations/${automationId}/runs`)).body.data.length, 2, 'disabled: no new enrolment');
  t.equal((await api('GET', `/automations/${automationId}/runs?status=running`)).body.data.length, 2, 'live runs continue');
  const stopped = await api('POST', `/automations/${automationId}/stop`);
  t.same(stopped.body, { object: 'automation', id: automationId, status: 'disabled' });
  t.equal((await api('GET', `/automations/${automationId}/runs?status=cancelled`)).body.data.length, 2, 'stop cancels every live run');
  clock.advance(4 * 86_400_000);
  await drain();
  t.equal((await api('GET', `/automations/${automationId}/runs?status=cancelled`)).body.data.length, 2, 'cancelled runs never wake');
  const other = (await api('POST', '/automations', flow('lead.captured'))).body.id;
  await api('POST', '/events/send', { event: 'lead.captured', contact_id: cat });
  await drain();
  const live = (await api('GET', `/automations/${other}/runs?status=running`)).body.data;
  t.equal(live.length, 1);
  t.same((await api('DELETE', `/automations/${other}`)).body, { object: 'automation', id: other, deleted: true });
  t.equal((await api('GET', `/automations/${other}`)).status, 404);
  const row = await db.selectFrom('automation_runs').select('status').where('id', '=', live[0].id).executeTakeFirstOrThrow();
  t.equal(row.status, 'cancelled', 'delete cancels live runs');
});

t.test('runs finishing together are written together, each as it would be alone', async (t) => {
  const teams = { quiet: await app.newTeam('Batch, no endpoint'), listening: await app.newTeam('Batch, an endpoint') };
  const listen = { endpoint: 'http://127.0.0.1:9/completed', events: ['automation.run.completed'] };
  t.equal((await call(app.baseUrl, 'POST', '/webhooks', { token: teams.listening.token, body: listen })).status, 201);
  for (const [name, team] of Object.entries(teams)) {
    const as = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });
    t.equal((await as('POST', '/events', { name: 'batch.entered' })).status, 201);
    const automationId = (await as('POST', '/automations', {
      name: 'Wait an hour', status: 'enabled',
      steps: [{ key: 'start', type: 'trigger', config: { event_name: 'batch.entered' } }, { key: 'wait', type: 'delay', config: { duration: '1 hour' } }],
      connections: [{ from: 'start', to: 'wait' }],
    })).body.id;
    for (let i = 0; i < 5; i++) {
      const contact = (await as('POST', '/contacts', { email: `batch${i}@inbox-one.net` })).body.id;
      t.equal((await as('POST', '/events/send', { event: 'batch.entered', contact_id: contact })).status, 202);
    }
    await drain();
    const wakeAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
    clock.advance(3_600_001);
    await drain();
    const runs = (await as('GET', `/automations/${automationId}/runs`)).body.data as { id: string; status: string; completed_at: string | null }[];
    t.equal(runs.length, 5, `${name}: five runs`);
    t.ok(runs.every((r) => r.status === 'completed' && r.completed_at !== null), `${name}: every run completed`);
    const waits = await db.selectFrom('automation_run_steps').selectAll().where('run_id', 'in', runs.map((r) => r.id)).where('step_key', '=', 'wait').execute();
    t.equal(waits.length, 5, `${name}: one record of the delay step a run`);
    t.ok(waits.every((w) => w.status === 'completed' && w.completed_at !== null && JSON.parse(w.output!).waited_until === wakeAt), `${name}: each delay record completed, with its wake time`);
    const completedEvents = await db.selectFrom('events').select('type').where('team_id', '=', team.teamId).where('type', '=', 'automation.run.completed').execute();
    t.equal(completedEvents.length, name === 'listening' ? 5 : 0, `${name}: an event a run only where an endpoint listens`);
  }
});

t.test('platform events start runs: svc:contact.created read from the stream, exit events end runs', async (t) => {
  await work.enqueue(PLATFORM_STREAM_WORK.kind, PLATFORM_STREAM_WORK.key, {});
  const automationId = (await api('POST', '/automations', {
    name: 'Welcome', status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'svc:contact.created', exit_events: ['store:order.placed'] } },
      { key: 'wait', type: 'delay', config: { duration: '1 day' } },
    ],
    connections: [{ from: 'start', to: 'wait' }],
  })).body.id;
  const dee = (await api('POST', '/contacts', { email: 'dee@inbox-two.net' })).body.id;
  const run = await waitFor('the stream reader to enrol the new contact', async () => {
    // The reader parks between reads on the test's clock, and leaves events younger than a second.
    clock.advance(1_000);
    await drain();
    return (await api('GET', `/automations/${automationId}/runs`)).body.data[0];
  });
  t.equal((await runOf(automationId, run.id)).contact_id, dee);
  clock.advance(1_000);
  await drain();
  t.equal((await api('GET', `/automations/${automationId}/runs`)).body.data.length, 1, 'the event enrols once');
  t.equal((await api('POST', '/events/send', { event: 'store:order.placed', contact_id: dee })).status, 202);
  t.equal((await runOf(automationId, run.id)).status, 'cancelled', 'an exit event ends the run');
});
