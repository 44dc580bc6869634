import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';

// The hosted-email SDK, unchanged, pointed at svc: every templates call it has (create with its
// chained publish, get, list, update, publish, duplicate, remove) and emails.send with a template.
const dns = await mailZone();
const app = await startTestAppliance({ env: { SVC_DNS_SERVERS: dns.address } });
t.teardown(async () => { await app.stop(); await dns.stop(); });
const team = await app.newTeam('SDK templates');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
dns.set('sender.net', [{ type: 'MX', exchange: 'mx.inbox-one.net', priority: 10 }]);
const resend = new Resend(team.token, { baseUrl: app.baseUrl });

t.test('templates: create, get, list, update, publish, duplicate, remove; send with a template', async (t) => {
  const created = await resend.templates.create({
    name: 'SDK order', alias: 'sdk-order', from: 'Shop <shop@sender.net>', subject: 'Order {{ORDER}}', html: '<p>Hi {{NAME}}, order {{ORDER}}</p>',
    replyTo: 'help@sender.net',
    variables: [{ key: 'NAME', type: 'string', fallbackValue: 'there' }, { key: 'ORDER', type: 'number', fallbackValue: null }],
  });
  t.equal(created.error, null, JSON.stringify(created.error));
  t.equal(created.data?.object, 'template');
  const id = created.data!.id;
  const got = await resend.templates.get(id);
  t.equal(got.error, null);
  t.match(got.data, { object: 'template', id, name: 'SDK order', alias: 'sdk-order', status: 'draft', reply_to: ['help@sender.net'], has_unpublished_versions: true });
  t.same(got.data!.variables!.map((v) => [v.key, v.type, v.fallback_value]), [['NAME', 'string', 'there'], ['ORDER', 'number', null]]);
  const refused = await resend.emails.send({ to: 'ann@inbox-one.net', template: { id, variables: { ORDER: 7 } } });
  t.equal(refused.error?.name, 'invalid_parameter', 'a draft is not sent');
  const published = await resend.templates.publish('sdk-order');
  t.same(published.data, { object: 'template', id });
  const sent = await resend.emails.send({ to: 'ann@inbox-one.net', template: { id: 'sdk-order', variables: { ORDER: 7 } } });
  t.equal(sent.error, null, JSON.stringify(sent.error));
  const email = await resend.emails.get(sent.data!.id);
  t.match(email.data, { subject: 'Order 7', html: '<p>Hi there, order 7</p>', from: 'Shop <shop@sender.net>' });
  const updated = await resend.templates.update(id, { subject: 'Your order {{ORDER}}' });
  t.same(updated.data, { object: 'template', id });
  t.match((await resend.templates.get(id)).data, { subject: 'Your order {{ORDER}}', has_unpublished_versions: true, status: 'published' });
  const copy = await resend.templates.duplicate(id);
  t.equal(copy.error, null);
  t.not(copy.data!.id, id);
  const list = await resend.templates.list({ limit: 10 });
  t.equal(list.error, null);
  t.same(list.data!.data.map((x) => x.id), [copy.data!.id, id]);
  t.same((await resend.templates.list({ limit: 1, after: copy.data!.id })).data!.data.map((x) => x.id), [id]);
  const removed = await resend.templates.remove(id);
  t.same(removed.data, { object: 'template', id, deleted: true });
  t.equal((await resend.templates.get(id)).error?.name, 'not_found');
});

t.test('create(...).publish() chains', async (t) => {
  const chained = await resend.templates.create({ name: 'Chained', html: '<p>Hello</p>', subject: 'Hello', from: 'a@sender.net' }).publish();
  t.equal(chained.error, null, JSON.stringify(chained.error));
  t.match((await resend.templates.get(chained.data!.id)).data, { status: 'published' });
  const sent = await resend.emails.send({ to: 'bob@inbox-two.net', template: { id: chained.data!.id } });
  t.equal(sent.error, null, JSON.stringify(sent.error));
  const batch = await resend.batch.send([{ to: 'bob@inbox-two.net', template: { id: chained.data!.id } }]);
  t.equal(batch.error, null, JSON.stringify(batch.error));
  t.equal(batch.data!.data.length, 1);
});
