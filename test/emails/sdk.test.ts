import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { verifyDomainThroughApi } from '../helpers/sending.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';

// The resend SDK, unchanged, against svc: only the base URL and the key differ. The sending
// domain is created and verified through the domains API, and mail reaches a fake MX.
const dns = await mailZone();
const mx = await startFakeMx({ dns: dns.address });
const app = await startTestAppliance({
  roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); });
const team = await app.newTeam('SDK sender');
await verifyDomainThroughApi(app.baseUrl, team.token, dns, 'sdk-sender.net');
const resend = new Resend(team.token, { baseUrl: app.baseUrl });

t.test('emails.send → delivered, DKIM-signed with the domain\'s own key; emails.get', async (t) => {
  const sent = await resend.emails.send({
    from: 'SDK <hi@sdk-sender.net>', to: ['ann@inbox-one.net'], subject: 'From the SDK', html: '<p>Hello</p>', text: 'Hello',
    replyTo: 'help@sdk-sender.net', tags: [{ name: 'source', value: 'sdk' }], headers: { 'X-Campaign': 'c1' },
  }, { idempotencyKey: 'sdk-send-1' });
  t.equal(sent.error, null);
  const id = sent.data!.id;
  const message = await waitFor('delivery', async () => mx.received.find((m) => m.messageId === `<${id}@sdk-sender.net>`));
  t.equal(message.dkim, 'pass', 'verified against the DKIM record the domains API published');
  const got = await waitFor('delivered', async () => { const r = await resend.emails.get(id); return r.data?.last_event === 'delivered' ? r : undefined; });
  t.match(got.data, { object: 'email', id, from: 'SDK <hi@sdk-sender.net>', to: ['ann@inbox-one.net'], subject: 'From the SDK', reply_to: ['help@sdk-sender.net'] });
  const again = await resend.emails.send({ from: 'SDK <hi@sdk-sender.net>', to: ['ann@inbox-one.net'], subject: 'From the SDK', html: '<p>Hello</p>', text: 'Hello', replyTo: 'help@sdk-sender.net', tags: [{ name: 'source', value: 'sdk' }], headers: { 'X-Campaign': 'c1' } }, { idempotencyKey: 'sdk-send-1' });
  t.equal(again.data?.id, id, 'the idempotency key through the SDK');
});

t.test('batch.send (strict and permissive) and emails.list', async (t) => {
  const batch = await resend.batch.send([
    { from: 'hi@sdk-sender.net', to: 'b1@inbox-one.net', subject: 'Batch 1', text: 'one' },
    { from: 'hi@sdk-sender.net', to: 'b2@inbox-two.net', subject: 'Batch 2', text: 'two' },
  ]);
  t.equal(batch.error, null);
  t.equal(batch.data?.data.length, 2);
  const refused = await resend.batch.send([
    { from: 'hi@sdk-sender.net', to: 'b3@inbox-one.net', subject: 'Batch 3', text: 'three' },
    { from: 'hi@unverified.net', to: 'b4@inbox-one.net', subject: 'Batch 4', text: 'four' },
  ]);
  t.match(refused.error, { name: 'validation_error', statusCode: 403 });
  const permissive = await resend.batch.send([
    { from: 'hi@sdk-sender.net', to: 'b5@inbox-one.net', subject: 'Batch 5', text: 'five' },
    { from: 'hi@unverified.net', to: 'b6@inbox-one.net', subject: 'Batch 6', text: 'six' },
  ], { batchValidation: 'permissive' });
  t.equal(permissive.error, null);
  t.equal(permissive.data?.data.length, 1);
  t.match((permissive.data as { errors?: { index: number }[] }).errors, [{ index: 1 }]);
  for (const { id } of batch.data!.data) await waitFor(`${id} delivered`, async () => (await resend.emails.get(id)).data?.last_event === 'delivered');
  const list = await resend.emails.list({ limit: 2 });
  t.equal(list.error, null);
  t.equal(list.data?.object, 'list');
  t.equal(list.data?.data.length, 2);
  t.equal(list.data?.has_more, true);
  t.equal(list.data?.data[0]?.id, permissive.data!.data[0]!.id, 'newest first');
  const next = await resend.emails.list({ limit: 2, after: list.data!.data[1]!.id });
  t.ok(next.data?.data.some((e) => e.id === batch.data!.data[0]!.id));
});
