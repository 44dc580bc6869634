import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { publishedTemplate } from '../helpers/templates.js';
import { call } from '../helpers/http.js';

// Automations: every automations call the unchanged SDK has, and the graph's refusals over raw
// HTTP (422 validation_error with one `errors[]` entry per offending step key).
const app = await startTestAppliance();
t.teardown(() => app.stop());
const team = await app.newTeam('Automations');
const resend = new Resend(team.token, { baseUrl: app.baseUrl });
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });
const TEMPLATE = await publishedTemplate(app.baseUrl, team.token, {});
await api('POST', '/events', { name: 'user.signed_up' });

t.test('SDK: create, get, list, update, duplicate, stop, remove, runs.list, runs.get', async (t) => {
  const created = await resend.automations.create({
    name: 'Onboarding',
    steps: [
      { key: 'start', type: 'trigger', config: { eventName: 'user.signed_up' } },
      { key: 'wait', type: 'delay', config: { duration: '2 days' } },
      { key: 'hello', type: 'send_email', config: { template: { id: TEMPLATE }, from: 'hi@sender.net' } },
    ],
    connections: [{ from: 'start', to: 'wait' }, { from: 'wait', to: 'hello' }],
  });
  t.equal(created.error, null, JSON.stringify(created.error));
  t.equal(created.data?.object, 'automation');
  const id = created.data!.id;
  const got = await resend.automations.get(id);
  t.match(got.data, { object: 'automation', id, name: 'Onboarding', status: 'disabled', created_at: /^\d{4}-/ });
  t.same(got.data!.steps.map((s) => s.key), ['start', 'wait', 'hello']);
  t.same(got.data!.steps[0]!.config, { event_name: 'user.signed_up' });
  t.same(got.data!.connections, [{ from: 'start', to: 'wait', type: 'default' }, { from: 'wait', to: 'hello', type: 'default' }]);
  const list = await resend.automations.list({ limit: 5 });
  t.match(list.data, { object: 'list', has_more: false });
  t.same(list.data!.data.map((a) => a.id), [id]);
  t.same((await resend.automations.list({ status: 'enabled' })).data!.data, []);
  const updated = await resend.automations.update(id, { name: 'Onboarding v2', status: 'enabled' });
  t.same(updated.data, { object: 'automation', id });
  t.match((await resend.automations.get(id)).data, { name: 'Onboarding v2', status: 'enabled' });
  const copy = await resend.automations.duplicate(id);
  t.equal(copy.error, null, JSON.stringify(copy.error));
  t.match((await resend.automations.get(copy.data!.id)).data, { name: 'Onboarding v2 (copy)', status: 'disabled' });
  const contact = await resend.contacts.create({ email: 'sdk-run@example.com' });
  await resend.events.send({ event: 'user.signed_up', contactId: contact.data!.id });
  const runs = await resend.automations.runs.list({ automationId: id, status: ['running'] });
  t.equal(runs.error, null, JSON.stringify(runs.error));
  t.equal(runs.data!.data.length, 1, 'the send enrolled one run');
  const run = await resend.automations.runs.get({ automationId: id, runId: runs.data!.data[0]!.id });
  t.match(run.data, { object: 'automation_run', status: 'running', started_at: null });
  t.same(run.data!.steps.map((s) => [s.key, s.status]), [['start', 'pending'], ['wait', 'pending'], ['hello', 'pending']]);
  const stopped = await resend.automations.stop(id);
  t.same(stopped.data, { object: 'automation', id, status: 'disabled' });
  t.equal((await resend.automations.runs.get({ automationId: id, runId: run.data!.id })).data?.status, 'cancelled');
  const removed = await resend.automations.remove(id);
  t.same(removed.data, { object: 'automation', id, deleted: true });
  t.equal((await resend.automations.get(id)).error?.name, 'not_found');
  t.equal((await resend.automations.runs.list({ automationId: id })).error?.name, 'not_found');
});

const graph = (steps: unknown[], connections: unknown[]) => api('POST', '/automations', { name: 'Bad', steps, connections });
const paths = (r: { body: { errors: { path: string }[] } }) => r.body.errors.map((e) => e.path);
const trigger = { key: 'start', type: 'trigger', config: { event_name: 'user.signed_up' } };

t.test('the graph: one entry per offending step key', async (t) => {
  const r = await graph([
    trigger,
    { key: 'w1', type: 'delay', config: { duration: '31 days' } },
    { key: 'w2', type: 'delay', config: { duration: 'soon' } },
    { key: 'orphan', type: 'delay', config: { duration: '1 day' } },
    { key: 'ask', type: 'wait_for_event', config: { event_name: 'x' } },
    { key: 'bye', type: 'contact_delete', config: {} },
  ], [{ from: 'start', to: 'w1' }, { from: 'w1', to: 'w2' }]);
  t.equal(r.status, 422);
  t.equal(r.body.name, 'validation_error');
  t.same(paths(r).sort(), ['steps.ask', 'steps.bye', 'steps.w1', 'steps.w2']);
  const cyc = await graph([trigger, { key: 'a', type: 'delay', config: { duration: '1h' } }, { key: 'b', type: 'delay', config: { duration: '1h' } }],
    [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'a' }]);
  t.equal(cyc.status, 422);
  t.same(paths(cyc), ['steps.a'], 'the cycle is named at the step that closes it');
  const two = await graph([trigger, { ...trigger, key: 'again' }], [{ from: 'start', to: 'again' }]);
  t.ok(paths(two).includes('steps.again'));
  const none = await graph([{ key: 'a', type: 'delay', config: { duration: '1h' } }], []);
  t.same(paths(none), ['steps']);
  const unreachable = await graph([trigger, { key: 'lost', type: 'delay', config: { duration: '1h' } }], []);
  t.same(paths(unreachable), ['steps.lost']);
  const dupKey = await graph([trigger, { key: 'start', type: 'delay', config: { duration: '1h' } }], []);
  t.same(paths(dupKey), ['steps.start']);
  const tooMany = await graph([trigger, ...Array.from({ length: 150 }, (_, i) => ({ key: `d${i}`, type: 'delay', config: { duration: '1h' } }))], []);
  t.same(paths(tooMany), ['steps'], 'at most 150 steps');
});

t.test('edges: one outgoing edge, a condition\'s two branches', async (t) => {
  const cond = { key: 'c', type: 'condition', config: { type: 'rule', field: 'email', operator: 'ends_with', value: '@example.com' } };
  const d = (key: string) => ({ key, type: 'delay', config: { duration: '1h' } });
  const fork = await graph([trigger, d('a'), d('b')], [{ from: 'start', to: 'a' }, { from: 'start', to: 'b' }]);
  t.same(paths(fork), ['steps.start']);
  const branchy = await graph([trigger, d('a'), d('b')], [{ from: 'start', to: 'a', type: 'condition_met' }, { from: 'a', to: 'b' }]);
  t.same(paths(branchy), ['steps.start']);
  const condDefault = await graph([trigger, cond, d('a')], [{ from: 'start', to: 'c' }, { from: 'c', to: 'a' }]);
  t.same(paths(condDefault), ['steps.c']);
  const twoMet = await graph([trigger, cond, d('a'), d('b')], [{ from: 'start', to: 'c' }, { from: 'c', to: 'a', type: 'condition_met' }, { from: 'c', to: 'b', type: 'condition_met' }]);
  t.same(paths(twoMet), ['steps.c']);
  const timeout = await graph([trigger, d('a')], [{ from: 'start', to: 'a', type: 'timeout' }]);
  t.same(paths(timeout), ['steps.start']);
  const good = await graph([trigger, cond, d('a'), d('b')], [{ from: 'start', to: 'c' }, { from: 'c', to: 'a', type: 'condition_met' }, { from: 'c', to: 'b', type: 'condition_not_met' }]);
  t.equal(good.status, 201, JSON.stringify(good.body));
});

t.test('names resolve against the team: events, segments, topics, properties', async (t) => {
  const missing = '0190f2c4-1b2a-7c3d-8e4f-00000000000a';
  const r = await graph([
    { key: 'start', type: 'trigger', config: { event_name: 'no.such.event', exit_events: ['also.unknown'] } },
    { key: 'seg', type: 'add_to_segment', config: { segment_id: missing } },
    { key: 'topic', type: 'topic_update', config: { topic_id: missing, subscription: 'opt_in' } },
    { key: 'cond', type: 'condition', config: { type: 'and', rules: [{ type: 'rule', field: 'properties.undeclared', operator: 'exists' }] } },
    { key: 'mail', type: 'send_email', config: { template: { id: TEMPLATE }, topic_id: missing } },
  ], [{ from: 'start', to: 'seg' }, { from: 'seg', to: 'topic' }, { from: 'topic', to: 'cond' }, { from: 'cond', to: 'mail', type: 'condition_met' }]);
  t.equal(r.status, 422);
  t.same(paths(r).sort(), ['steps.cond', 'steps.mail', 'steps.seg', 'steps.start', 'steps.topic']);
  const seg = (await api('POST', '/segments', { name: 'Buyers' })).body.id;
  const topic = (await api('POST', '/topics', { name: 'News', default_subscription: 'opt_in' })).body.id;
  await api('POST', '/contacts', { email: 'p@example.com', properties: { score: 3 } });
  const ok = await graph([
    { key: 'start', type: 'trigger', config: { event_name: 'svc:segment.entered', segment_id: seg } },
    { key: 'topic', type: 'topic_update', config: { topic_id: topic, subscription: 'opt_out' } },
    { key: 'cond', type: 'condition', config: { type: 'rule', field: 'properties.score', operator: 'gte', value: 2 } },
    { key: 'upd', type: 'contact_update', config: { first_name: 'A', properties: { brand_new: true } } },
  ], [{ from: 'start', to: 'topic' }, { from: 'topic', to: 'cond' }, { from: 'cond', to: 'upd', type: 'condition_not_met' }]);
  t.equal(ok.status, 201, JSON.stringify(ok.body));
  const noSeg = await graph([{ key: 'start', type: 'trigger', config: { event_name: 'svc:segment.entered' } }], []);
  t.same(paths(noSeg), ['steps.start'], 'svc:segment.entered requires segment_id');
  const varUpdate = await graph([trigger, { key: 'u', type: 'contact_update', config: { first_name: { var: 'event.name' } } }], [{ from: 'start', to: 'u' }]);
  t.same(paths(varUpdate), ['steps.u'], 'contact_update sets literals');
});

t.test('trigger rules: exit_events, reentry_after', async (t) => {
  const trig = (config: Record<string, unknown>) => graph([{ key: 'start', type: 'trigger', config }], []);
  t.equal((await trig({ event_name: 'store:order.placed', exit_events: ['store:order.placed'] })).status, 201, 'an order trigger may exit on itself');
  t.equal((await trig({ event_name: 'store:cart.updated', exit_events: ['store:cart.updated'] })).status, 422);
  t.equal((await trig({ event_name: 'user.signed_up', exit_events: Array.from({ length: 11 }, () => 'store:order.paid') })).status, 422, 'at most 10 exit events');
  t.equal((await trig({ event_name: 'store:cart.updated', reentry_after: '7 days' })).status, 201);
  t.equal((await trig({ event_name: 'store:cart.updated', reentry_after: '91 days' })).status, 422, 'at most 90 days');
  t.equal((await trig({ event_name: 'user.signed_up', reentry_after: '7 days' })).status, 422, 'only store triggers');
  t.equal((await trig({ event_name: 'store:order.paid', exit_events: ['store:order.paid'], reentry_after: '1 day' })).status, 422, 'refused on a trigger that exits on itself');
  t.equal((await trig({ event_name: 'svc:email.nope' })).status, 422);
  t.equal((await trig({ event_name: 'svc:topic.subscribed' })).status, 201, 'topic_id is optional');
});

t.test('refusals of the routes: unknown ids, list status, PATCH halves', async (t) => {
  t.equal((await api('GET', '/automations/0190f2c4-1b2a-7c3d-8e4f-0123456789ab')).status, 404);
  t.equal((await api('GET', '/automations/not-an-id')).status, 404);
  t.equal((await api('POST', '/automations/0190f2c4-1b2a-7c3d-8e4f-0123456789ab/stop')).status, 404);
  const list = await api('GET', '/automations?status=paused');
  t.equal(list.status, 422);
  t.equal(list.body.name, 'invalid_parameter');
  const id = (await graph([trigger], [])).body.id;
  const half = await api('PATCH', `/automations/${id}`, { steps: [trigger] });
  t.equal(half.status, 422, 'steps without connections');
  t.equal((await api('GET', `/automations/${id}/runs/0190f2c4-1b2a-7c3d-8e4f-0123456789ab`)).status, 404);
  t.equal((await api('POST', '/automations', { name: 'x', steps: [trigger] })).body.name, 'missing_required_field');
  const other = await app.newTeam('Other automations');
  t.equal((await call(app.baseUrl, 'GET', `/automations/${id}`, { token: other.token })).status, 404);
});
