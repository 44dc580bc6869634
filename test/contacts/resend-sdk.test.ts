import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';

// The hosted-email SDK, unchanged, pointed at svc: every contacts, contact-topics,
// contact-properties and topics call it has (segments and imports are another half).
const app = await startTestAppliance();
t.teardown(() => app.stop());
const baseUrl = app.baseUrl;
const team = await app.newTeam('SDK audience');
const resend = new Resend(team.token, { baseUrl });

t.test('contacts: create, get by id and by email, list, update, remove', async (t) => {
  const topic = await resend.topics.create({ name: 'SDK news', defaultSubscription: 'opt_out' });
  t.equal(topic.error, null);
  const created = await resend.contacts.create({
    email: 'Sam@Example.com', firstName: 'Sam', lastName: 'Stone', unsubscribed: false, properties: { plan: 'pro', seats: 2 },
    topics: [{ id: topic.data!.id, subscription: 'opt_in' }],
  });
  t.equal(created.error, null, JSON.stringify(created.error));
  t.equal(created.data?.object, 'contact');
  t.match(created.data?.id, /^[0-9a-f-]{36}$/);
  const id = created.data!.id;

  const byId = await resend.contacts.get(id);
  t.equal(byId.error, null);
  t.match(byId.data, {
    object: 'contact', id, email: 'Sam@Example.com', first_name: 'Sam', last_name: 'Stone', unsubscribed: false,
    properties: { plan: { type: 'string', value: 'pro' }, seats: { type: 'number', value: 2 } },
  });
  const byEmail = await resend.contacts.get({ email: 'sam@example.com' });
  t.equal(byEmail.data?.id, id);
  t.equal((await resend.contacts.get({ id })).data?.id, id);

  const again = await resend.contacts.create({ email: 'sam@example.com', firstName: 'Samuel' });
  t.equal(again.data?.id, id, 'a repeat create answers the existing id');

  const second = await resend.contacts.create({ email: 'tess@example.com' });
  const listed = await resend.contacts.list();
  t.equal(listed.error, null);
  t.equal(listed.data?.object, 'list');
  t.same(listed.data?.data.map((c) => c.id), [second.data!.id, id]);
  t.match(listed.data?.data[1], { email: 'Sam@Example.com', first_name: 'Samuel', last_name: 'Stone', unsubscribed: false });
  const page = await resend.contacts.list({ limit: 1, after: second.data!.id });
  t.same(page.data?.data.map((c) => c.id), [id], 'the after cursor');

  const updated = await resend.contacts.update({ id, lastName: null, unsubscribed: true, properties: { plan: null, seats: 5 } });
  t.equal(updated.error, null, JSON.stringify(updated.error));
  t.same(updated.data, { object: 'contact', id });
  const viaEmail = await resend.contacts.update({ email: 'SAM@example.com', firstName: 'S.' });
  t.equal(viaEmail.data?.id, id);
  t.match((await resend.contacts.get(id)).data, { first_name: 'S.', last_name: null, unsubscribed: true, properties: { seats: { type: 'number', value: 5 } } });
  t.notOk('plan' in (await resend.contacts.get(id)).data!.properties, 'null removed the key');

  const wrongType = await resend.contacts.update({ id, properties: { seats: 'many' } });
  t.match(wrongType.error, { name: 'invalid_parameter', statusCode: 422 });

  const removed = await resend.contacts.remove(id);
  t.equal(removed.error, null);
  t.match(removed.data, { object: 'contact', contact: id, deleted: true });
  const removedByEmail = await resend.contacts.remove({ email: 'tess@example.com' });
  t.match(removedByEmail.data, { contact: second.data!.id, deleted: true });
  const missing = await resend.contacts.get(id);
  t.match(missing.error, { name: 'not_found', statusCode: 404 });
});

t.test('contacts.topics: list and update, by id and by email', async (t) => {
  const news = await resend.topics.create({ name: 'Topics news', defaultSubscription: 'opt_in', description: 'Every month' });
  const promo = await resend.topics.create({ name: 'Topics promo', defaultSubscription: 'opt_out' });
  const contact = await resend.contacts.create({ email: 'uma@example.com' });
  const id = contact.data!.id;
  const listed = await resend.contacts.topics.list({ id });
  t.equal(listed.error, null);
  t.equal(listed.data?.object, 'list');
  const of = (data: typeof listed.data) => Object.fromEntries((data?.data ?? []).map((x) => [x.id, x.subscription]));
  t.match(of(listed.data), { [news.data!.id]: 'opt_in', [promo.data!.id]: 'opt_out' }, 'the defaults');
  t.match(listed.data?.data.find((x) => x.id === news.data!.id), { name: 'Topics news', description: 'Every month' });

  const updated = await resend.contacts.topics.update({ email: 'uma@example.com', topics: [{ id: news.data!.id, subscription: 'opt_out' }, { id: promo.data!.id, subscription: 'opt_in' }] });
  t.equal(updated.error, null, JSON.stringify(updated.error));
  t.same(updated.data, { id });
  const after = await resend.contacts.topics.list({ email: 'uma@example.com', limit: 100 });
  t.match(of(after.data), { [news.data!.id]: 'opt_out', [promo.data!.id]: 'opt_in' });
  const unknown = await resend.contacts.topics.update({ id, topics: [{ id: crypto.randomUUID(), subscription: 'opt_in' }] });
  t.match(unknown.error, { name: 'validation_error', statusCode: 422 });
});

t.test('contactProperties: create, list, get, update, remove', async (t) => {
  const created = await resend.contactProperties.create({ key: 'company', type: 'string', fallbackValue: 'your company' });
  t.equal(created.error, null, JSON.stringify(created.error));
  t.equal(created.data?.object, 'contact_property');
  const id = created.data!.id;
  const numeric = await resend.contactProperties.create({ key: 'age', type: 'number' });
  t.equal(numeric.error, null);

  const got = await resend.contactProperties.get(id);
  t.equal(got.error, null);
  t.match(got.data, { object: 'contact_property', id, key: 'company', type: 'string', fallbackValue: 'your company', createdAt: /^\d{4}-/ });
  const listed = await resend.contactProperties.list();
  t.equal(listed.error, null);
  t.match(listed.data, { object: 'list', has_more: false });
  t.match(listed.data?.data.find((p) => p.id === numeric.data!.id), { key: 'age', type: 'number', fallbackValue: null });

  const updated = await resend.contactProperties.update({ id, fallbackValue: 'the team' });
  t.equal(updated.error, null, JSON.stringify(updated.error));
  t.same(updated.data, { object: 'contact_property', id });
  t.equal((await resend.contactProperties.get(id)).data?.fallbackValue, 'the team');
  const badFallback = await resend.contactProperties.update({ id: numeric.data!.id, fallbackValue: 'old' });
  t.match(badFallback.error, { name: 'validation_error', statusCode: 422 });
  const duplicate = await resend.contactProperties.create({ key: 'COMPANY', type: 'string' });
  t.match(duplicate.error, { name: 'invalid_parameter', statusCode: 422 });

  const removed = await resend.contactProperties.remove(id);
  t.equal(removed.error, null);
  t.same(removed.data, { object: 'contact_property', id, deleted: true });
  t.match((await resend.contactProperties.get(id)).error, { name: 'not_found', statusCode: 404 });
});

t.test('topics: create, list, get, update, remove', async (t) => {
  const created = await resend.topics.create({ name: 'Releases', defaultSubscription: 'opt_in', description: 'New versions' });
  t.equal(created.error, null, JSON.stringify(created.error));
  const id = created.data!.id;
  const got = await resend.topics.get(id);
  t.match(got.data, { id, name: 'Releases', description: 'New versions', default_subscription: 'opt_in', created_at: /^\d{4}-/ });
  const listed = await resend.topics.list();
  t.equal(listed.error, null);
  t.ok(listed.data?.data.some((x) => x.id === id));
  const duplicate = await resend.topics.create({ name: 'releases', defaultSubscription: 'opt_out' });
  t.match(duplicate.error, { name: 'invalid_parameter', statusCode: 422 });

  const updated = await resend.topics.update({ id, name: 'Release notes', description: 'Each version' });
  t.equal(updated.error, null, JSON.stringify(updated.error));
  t.match(updated.data, { id });
  t.match((await resend.topics.get(id)).data, { name: 'Release notes', description: 'Each version', default_subscription: 'opt_in' });

  const removed = await resend.topics.remove(id);
  t.equal(removed.error, null);
  t.same(removed.data, { object: 'topic', id, deleted: true });
  t.match((await resend.topics.get(id)).error, { name: 'not_found', statusCode: 404 });
});

t.test('a sending_access key reads through the SDK and is refused writes', async (t) => {
  const key = await app.appliance.services.api.foundation.apiKeys.create(team.teamId, { name: 'sdk sender', permission: 'sending_access' }, { kind: 'operator' });
  const sender = new Resend(key.token, { baseUrl });
  t.equal((await sender.contacts.list()).error, null);
  t.equal((await sender.topics.list()).error, null);
  t.equal((await sender.contactProperties.list()).error, null);
  t.match((await sender.contacts.create({ email: 'no@example.com' })).error, { name: 'restricted_api_key', statusCode: 401 });
  t.match((await sender.topics.create({ name: 'No', defaultSubscription: 'opt_in' })).error, { name: 'restricted_api_key', statusCode: 401 });
  t.match((await sender.contactProperties.create({ key: 'no', type: 'string' })).error, { name: 'restricted_api_key', statusCode: 401 });
});
