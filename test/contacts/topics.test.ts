import t from 'tap';
import { effectiveSubscription } from '../../core/topics/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentHashOf, consentRecords, platformEvents, teamEvents } from '../helpers/audience.js';
import { call } from '../helpers/http.js';

// Topics over raw HTTP, and a contact's choices of them: defaults, choices, the consent trail and
// platform events they write, and the refusals of the spec's tables.
const app = await startTestAppliance();
t.teardown(() => app.stop());
const base = app.baseUrl;

t.test('create, get, list, update, delete: the topic\'s shape at each step', async (t) => {
  const { token } = await app.newTeam('Topics');
  const r = await call(base, 'POST', '/topics', { token, body: { name: 'Product news', default_subscription: 'opt_in', description: 'Monthly' } });
  t.equal(r.status, 201, JSON.stringify(r.body));
  t.same(Object.keys(r.body).sort(), ['id', 'object']);
  t.equal(r.body.object, 'topic');
  const got = await call(base, 'GET', `/topics/${r.body.id}`, { token });
  t.equal(got.status, 200);
  t.match(got.body, { object: 'topic', id: r.body.id, name: 'Product news', description: 'Monthly', default_subscription: 'opt_in', visibility: 'private', created_at: /^\d{4}-/ });
  const second = await call(base, 'POST', '/topics', { token, body: { name: 'Offers', default_subscription: 'opt_out', visibility: 'public' } });
  const list = await call(base, 'GET', '/topics', { token });
  t.equal(list.status, 200);
  t.match(list.body, { object: 'list', has_more: false });
  t.same(list.body.data.map((x: { id: string }) => x.id), [second.body.id, r.body.id], 'newest first');
  t.same(list.body.data[0], { id: second.body.id, name: 'Offers', description: null, default_subscription: 'opt_out', visibility: 'public', created_at: list.body.data[0].created_at });
  const page = await call(base, 'GET', '/topics?limit=1', { token });
  t.equal(page.body.has_more, true);

  const patched = await call(base, 'PATCH', `/topics/${r.body.id}`, { token, body: { id: r.body.id, name: 'News', description: null, visibility: 'public', default_subscription: 'opt_in' } });
  t.equal(patched.status, 200, JSON.stringify(patched.body));
  t.same(patched.body, { object: 'topic', id: r.body.id });
  t.match((await call(base, 'GET', `/topics/${r.body.id}`, { token })).body, { name: 'News', description: null, visibility: 'public', default_subscription: 'opt_in' });

  const removed = await call(base, 'DELETE', `/topics/${r.body.id}`, { token });
  t.equal(removed.status, 200);
  t.same(removed.body, { object: 'topic', id: r.body.id, deleted: true });
  t.equal((await call(base, 'GET', `/topics/${r.body.id}`, { token })).status, 404);
  t.equal((await call(base, 'DELETE', `/topics/${r.body.id}`, { token })).status, 404);
  t.same((await call(base, 'GET', '/topics', { token })).body.data.map((x: { id: string }) => x.id), [second.body.id]);
  const reuse = await call(base, 'POST', '/topics', { token, body: { name: 'news', default_subscription: 'opt_out' } });
  t.equal(reuse.status, 201, 'a deleted topic\'s name is free again');
});

t.test('refusals of the topic routes, each with its status and name', async (t) => {
  const { token } = await app.newTeam('Topic refusals');
  const live = await call(base, 'POST', '/topics', { token, body: { name: 'Weekly', default_subscription: 'opt_in' } });
  const other = await call(base, 'POST', '/topics', { token, body: { name: 'Daily', default_subscription: 'opt_in' } });
  const cases: [string, string, unknown, number, string][] = [
    ['POST', '/topics', { name: 'weekly ', default_subscription: 'opt_out' }, 422, 'invalid_parameter'],
    ['POST', '/topics', { name: 'x'.repeat(51), default_subscription: 'opt_in' }, 422, 'validation_error'],
    ['POST', '/topics', { name: '  ', default_subscription: 'opt_in' }, 422, 'validation_error'],
    ['POST', '/topics', { name: 'Long', default_subscription: 'opt_in', description: 'd'.repeat(201) }, 422, 'validation_error'],
    ['POST', '/topics', { name: 'No default' }, 422, 'missing_required_field'],
    ['POST', '/topics', { default_subscription: 'opt_in' }, 422, 'missing_required_field'],
    ['POST', '/topics', { name: 'Bad', default_subscription: 'sometimes' }, 400, 'validation_error'],
    ['POST', '/topics', { name: 'Bad', default_subscription: 'opt_in', visibility: 'secret' }, 400, 'validation_error'],
    ['PATCH', `/topics/${live.body.id}`, { default_subscription: 'opt_out' }, 422, 'validation_error'],
    ['PATCH', `/topics/${live.body.id}`, { name: 'DAILY' }, 422, 'invalid_parameter'],
    ['PATCH', `/topics/${live.body.id}`, { name: 'x'.repeat(51) }, 422, 'validation_error'],
    ['PATCH', `/topics/${live.body.id}`, { id: other.body.id }, 422, 'invalid_parameter'],
    ['PATCH', `/topics/${crypto.randomUUID()}`, { name: 'x' }, 404, 'not_found'],
    ['GET', '/topics/not-an-id', undefined, 404, 'not_found'],
    ['GET', '/topics?limit=500', undefined, 422, 'invalid_parameter'],
  ];
  for (const [method, path, body, status, name] of cases) {
    const r = await call(base, method, path, { token, body });
    t.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}`);
    t.equal(r.body.name, name, `${method} ${path} ${JSON.stringify(body)}: ${r.body.message}`);
  }
  t.match((await call(base, 'GET', `/topics/${live.body.id}`, { token })).body, { name: 'Weekly', default_subscription: 'opt_in' }, 'unchanged');
  t.equal((await call(base, 'PATCH', `/topics/${live.body.id}`, { token, body: { name: 'WEEKLY' } })).status, 200, 'its own name in another case is no duplicate');
  const otherTeam = await app.newTeam('Topic outsider');
  t.equal((await call(base, 'GET', `/topics/${live.body.id}`, { token: otherTeam.token })).status, 404, 'another team\'s topic is 404');
  t.equal((await call(base, 'POST', '/topics', { token: otherTeam.token, body: { name: 'Weekly', default_subscription: 'opt_in' } })).status, 201, 'names are per team');
  const sender = await app.appliance.services.api.foundation.apiKeys.create(otherTeam.teamId, { name: 's', permission: 'sending_access' }, { kind: 'operator' });
  t.equal((await call(base, 'GET', '/topics', { token: sender.token })).status, 200);
  const write = await call(base, 'POST', '/topics', { token: sender.token, body: { name: 'S', default_subscription: 'opt_in' } });
  t.equal(write.status, 401);
  t.equal(write.body.name, 'restricted_api_key');
});

t.test('a contact\'s topics: its own choice, else the default; choices write consent and platform events, never contact.updated', async (t) => {
  const { token, teamId } = await app.newTeam('Choices');
  const news = (await call(base, 'POST', '/topics', { token, body: { name: 'News', default_subscription: 'opt_in', description: 'd' } })).body.id;
  const offers = (await call(base, 'POST', '/topics', { token, body: { name: 'Offers', default_subscription: 'opt_out' } })).body.id;
  const gone = (await call(base, 'POST', '/topics', { token, body: { name: 'Gone', default_subscription: 'opt_in' } })).body.id;
  const c = await call(base, 'POST', '/contacts', { token, headers: { 'user-agent': 'signup-form/1' }, body: { email: 'dee@example.com', topics: [{ id: offers, subscription: 'opt_in' }] } });
  t.equal(c.status, 201, JSON.stringify(c.body));
  await call(base, 'DELETE', `/topics/${gone}`, { token });
  const listed = await call(base, 'GET', `/contacts/${c.body.id}/topics`, { token });
  t.equal(listed.status, 200);
  t.match(listed.body, { object: 'list', has_more: false });
  t.same(listed.body.data, [
    { id: offers, name: 'Offers', description: null, subscription: 'opt_in' },
    { id: news, name: 'News', description: 'd', subscription: 'opt_in' },
  ], 'the choice made at creation, the default elsewhere; a deleted topic is not listed');

  const before = (await teamEvents(app, teamId, 'contact.')).length;
  const r = await call(base, 'PATCH', '/contacts/DEE@example.com/topics', { token, body: [{ id: news, subscription: 'opt_out' }, { id: offers, subscription: 'opt_in' }] });
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.same(r.body, { id: c.body.id });
  t.same((await call(base, 'GET', `/contacts/${c.body.id}/topics`, { token })).body.data.map((x: { subscription: string }) => x.subscription), ['opt_in', 'opt_out']);
  t.equal((await teamEvents(app, teamId, 'contact.')).length, before, 'no contact.* webhook for a topic change');
  const trail = (await consentRecords(app, teamId)).filter((x) => x.kind === 'topic');
  t.same(trail.map((x) => [x.topic_id, x.value]), [[offers, 'opt_in'], [news, 'opt_out']], 'one record per change: the unchanged choice wrote none');
  t.match(trail[0], { contact_id: c.body.id, source: 'api', user_agent: 'signup-form/1', email_hash: consentHashOf(app, 'dee@example.com') });
  const platform = (await platformEvents(app, teamId)).map((e) => [e.type, e.data]);
  t.same(platform, [
    ['svc:contact.created', { contact_id: c.body.id }],
    ['svc:topic.subscribed', { contact_id: c.body.id, topic_id: offers }],
    ['svc:topic.unsubscribed', { contact_id: c.body.id, topic_id: news }],
  ]);

  const page = await call(base, 'GET', `/contacts/${c.body.id}/topics?limit=1`, { token });
  t.equal(page.body.has_more, true);
  const next = await call(base, 'GET', `/contacts/${c.body.id}/topics?limit=1&after=${page.body.data[0].id}`, { token });
  t.same(next.body.data.map((x: { id: string }) => x.id), [news]);

  for (const [body, status, name] of [
    [[{ id: gone, subscription: 'opt_in' }], 422, 'validation_error'],
    [[{ id: crypto.randomUUID(), subscription: 'opt_in' }], 422, 'validation_error'],
    [[{ id: news, subscription: 'opt_in' }, { id: news, subscription: 'opt_out' }], 422, 'validation_error'],
    [[{ id: news, subscription: 'maybe' }], 400, 'validation_error'],
    [{ topics: [] }, 400, 'validation_error'],
  ] as const) {
    const refused = await call(base, 'PATCH', `/contacts/${c.body.id}/topics`, { token, body });
    t.equal(refused.status, status, JSON.stringify(body));
    t.equal(refused.body.name, name, JSON.stringify(body));
  }
  t.same((await call(base, 'GET', `/contacts/${c.body.id}/topics`, { token })).body.data.map((x: { subscription: string }) => x.subscription), ['opt_in', 'opt_out'], 'refused writes changed nothing');
  t.equal((await call(base, 'GET', `/contacts/${crypto.randomUUID()}/topics`, { token })).status, 404);
});

t.test('effective subscription: a global unsubscribe wins, then the own choice, then the default', async (t) => {
  const optIn = { default_subscription: 'opt_in' as const };
  const optOut = { default_subscription: 'opt_out' as const };
  t.equal(effectiveSubscription({ unsubscribed: false }, optIn, null), 'opt_in');
  t.equal(effectiveSubscription({ unsubscribed: false }, optOut, undefined), 'opt_out');
  t.equal(effectiveSubscription({ unsubscribed: false }, optOut, 'opt_in'), 'opt_in');
  t.equal(effectiveSubscription({ unsubscribed: false }, optIn, 'opt_out'), 'opt_out');
  t.equal(effectiveSubscription({ unsubscribed: true }, optIn, 'opt_in'), 'opt_out');
  t.equal(effectiveSubscription({ unsubscribed: true }, optIn, null), 'opt_out');
});
