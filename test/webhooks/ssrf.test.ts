import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { startDnsServer } from '../helpers/dns-server.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { emitEvent } from '../../core/outbox/index.js';
import { judgeAddress } from '../../net/url-policy.js';
import { webhookSender } from '../../net/webhook-sender.js';
import { createResolver } from '../../dns/resolver.js';
import { eventsRepo } from '../../storage/repos/index.js';

// SSRF: every unroutable form is refused on create and update (422 validation_error) and never
// connected to, with the operator switch off; with it on, loopback and private ranges pass but
// link-local, metadata, mapped forms and unresolvable names still do not.
const PUBLIC_V4 = '93.184.215.14';
const dns = await startDnsServer({
  'public.example.test': [{ type: 'A', value: PUBLIC_V4 }],
  'loop.example.test': [{ type: 'A', value: '127.0.0.1' }],
  'meta.example.test': [{ type: 'A', value: '169.254.169.254' }],
  'mapped.example.test': [{ type: 'AAAA', value: '::ffff:127.0.0.1' }],
  'mixed.example.test': [{ type: 'A', value: PUBLIC_V4 }, { type: 'A', value: '10.0.0.5' }],
  'private6.example.test': [{ type: 'AAAA', value: 'fd12::1' }],
  'alias.example.test': [{ type: 'CNAME', value: 'loop.example.test' }],
  'rebind.example.test': [{ type: 'A', value: PUBLIC_V4 }],
});
dns.set('servfail.example.test', 'SERVFAIL');
t.teardown(() => dns.stop());
const receiver = await startWebhookReceiver();
t.teardown(() => receiver.stop());
const env = { SVC_DNS_SERVERS: dns.address, SVC_DNS_TIMEOUT_MS: '300', SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' };
const strict = await startTestAppliance({ env });
t.teardown(() => strict.stop());
const onPremise = await startTestAppliance({ env: { ...env, SVC_WEBHOOKS_ALLOW_PRIVATE: 'true' } });
t.teardown(() => onPremise.stop());

const alwaysRefused = [
  'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://100.100.100.200/', 'http://[fe80::1]/',
  'http://[::ffff:127.0.0.1]/', 'http://[::ffff:169.254.169.254]/', 'http://[0:0:0:0:0:ffff:7f00:1]/', 'http://[::ffff:10.0.0.1]/',
  'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::]/', 'http://0.0.0.0/', 'http://0/', 'http://[::]/',
  'http://224.0.0.1/', 'http://255.255.255.255/', 'http://[ff02::1]/', 'http://198.18.0.1/', 'http://192.0.2.1/',
  'http://meta.example.test/', 'http://mapped.example.test/', 'http://nothing.example.test/', 'http://servfail.example.test/',
  'ftp://public.example.test/', 'file:///etc/passwd', 'gopher://public.example.test/', 'javascript:alert(1)', 'http://', 'not a url',
  'http://user:secret@public.example.test/',
];
const privateForms = [
  'http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://LOCALHOST./hook', 'http://api.localhost/hook', 'http://[::1]/',
  'http://10.0.0.1/', 'http://172.16.5.4/', 'http://192.168.1.1/', 'http://100.64.0.1/', 'http://[fc00::1]/',
  // decimal, octal, hex and short IPv4 forms of 127.0.0.1 (the URL parser normalises them; the policy judges the result)
  'http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f.0.0.1/', 'http://0x7f000001/', 'http://127.1/', 'http://017700000001/',
  'http://loop.example.test/', 'http://alias.example.test/', 'http://mixed.example.test/', 'http://private6.example.test/',
];
const accepted = [`http://${PUBLIC_V4}/hook`, 'https://public.example.test/hook', 'http://[2606:4700::1111]/hook'];

async function tryCreate(app: typeof strict, token: string, endpoint: string) {
  return call(app.baseUrl, 'POST', '/webhooks', { token, body: { endpoint, events: ['email.sent'] } });
}

t.test('switch off: every loopback, private, link-local, metadata, mapped, odd-form or unresolvable URL is 422', async (t) => {
  const { token } = await strict.newTeam('Strict');
  for (const endpoint of [...alwaysRefused, ...privateForms]) {
    const r = await tryCreate(strict, token, endpoint);
    t.equal(r.status, 422, endpoint);
    t.equal(r.body.name, 'validation_error', endpoint);
    t.match(r.body.errors, [{ path: 'endpoint' }], endpoint);
  }
  for (const endpoint of accepted) t.equal((await tryCreate(strict, token, endpoint)).status, 201, endpoint);
  t.equal(receiver.requests.length, 0, 'nothing was connected to');
});

t.test('a loopback or private endpoint refused names the setting that allows it; other refusals do not', async (t) => {
  const { token } = await strict.newTeam('Hint');
  for (const endpoint of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://loop.example.test/', 'http://10.0.0.1/']) {
    const r = await tryCreate(strict, token, endpoint);
    t.equal(r.status, 422, endpoint);
    t.match(r.body.message, /webhooks_allow_private setting \(SVC_WEBHOOKS_ALLOW_PRIVATE=true\)/, endpoint);
  }
  for (const endpoint of ['http://169.254.169.254/', 'http://meta.example.test/', 'http://nothing.example.test/', 'http://[fe80::1]/']) {
    const r = await tryCreate(strict, token, endpoint);
    t.equal(r.status, 422, endpoint);
    t.notMatch(r.body.message, /allow_private/, `${endpoint}: no switch would let it through`);
  }
});

t.test('update is judged the same way', async (t) => {
  const { token } = await strict.newTeam('Update');
  const r = await tryCreate(strict, token, 'https://public.example.test/hook');
  for (const endpoint of ['http://127.0.0.1/', 'http://0x7f000001/', 'http://meta.example.test/']) {
    const patched = await call(strict.baseUrl, 'PATCH', `/webhooks/${r.body.id}`, { token, body: { endpoint } });
    t.equal(patched.status, 422, endpoint);
    t.equal(patched.body.name, 'validation_error');
  }
  t.equal((await call(strict.baseUrl, 'GET', `/webhooks/${r.body.id}`, { token })).body.endpoint, 'https://public.example.test/hook');
});

t.test('switch on: loopback and private ranges pass; link-local, metadata, mapped and unresolvable still do not', async (t) => {
  const { token } = await onPremise.newTeam('OnPrem');
  for (const endpoint of privateForms) t.equal((await tryCreate(onPremise, token, endpoint)).status, 201, endpoint);
  for (const endpoint of alwaysRefused) {
    const r = await tryCreate(onPremise, token, endpoint);
    t.equal(r.status, 422, endpoint);
    t.equal(r.body.name, 'validation_error', endpoint);
  }
});

t.test('DNS rebinding: a name that turns private after the check is refused at connect time', async (t) => {
  const { token, teamId } = await strict.newTeam('Rebind');
  const port = new URL(receiver.url).port;
  const created = await tryCreate(strict, token, `http://rebind.example.test:${port}/rebind`);
  t.equal(created.status, 201, 'public when saved');
  for (const records of [[{ type: 'A', value: '127.0.0.1' }], [{ type: 'A', value: PUBLIC_V4 }, { type: 'A', value: '127.0.0.1' }]] as const) {
    dns.set('rebind.example.test', [...records]);
    await emitEvent(eventsRepo(strict.appliance.services.database.db), teamId, 'email.sent', { email_id: 'x' }, new Date());
    await strict.appliance.services.webhookDispatcher.runDue();
  }
  t.equal(receiver.at('/rebind').length, 0, 'the receiver on loopback was never reached');
  const attempts = (await call(strict.baseUrl, 'GET', `/webhooks/${created.body.id}/attempts`, { token })).body.data;
  t.equal(attempts.length, 2);
  t.ok(attempts.every((a: { error: string; http_status_code: null }) => /refused address/.test(a.error) && a.http_status_code === null), JSON.stringify(attempts.map((a: { error: string }) => a.error)));
});

t.test('the sender refuses IP literals itself (net never asks lookup for them)', async (t) => {
  const sender = webhookSender({ resolver: createResolver({ servers: [dns.address] }), allowPrivate: false, timeoutMs: 1000 });
  t.teardown(() => sender.close());
  const headers = { 'wh-id': 'm', 'wh-timestamp': '1', 'wh-signature': 'v1,x' };
  for (const url of [`${receiver.url}/literal`, receiver.url.replace('127.0.0.1', '[::ffff:127.0.0.1]') + '/literal']) {
    const outcome = await sender.send(url, headers, '{}');
    t.equal(outcome.statusCode, null, url);
    t.match(outcome.error, /refused address/, url);
  }
  t.equal(receiver.at('/literal').length, 0);
});

t.test('judgeAddress ranges', async (t) => {
  for (const a of ['8.8.8.8', PUBLIC_V4, '2606:4700::1111']) t.ok(judgeAddress(a, false).ok, a);
  for (const a of ['127.0.0.1', '10.1.1.1', '172.31.255.255', '192.168.0.1', '100.64.0.1', '::1', 'fd12::1']) {
    t.notOk(judgeAddress(a, false).ok, `${a} refused by default`);
    t.ok(judgeAddress(a, true).ok, `${a} allowed on premise`);
  }
  for (const a of ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', 'fe80::1', '::ffff:127.0.0.1', '0.0.0.0', '::', '224.0.0.1', 'fe80::1%eth0', 'nonsense']) {
    t.notOk(judgeAddress(a, true).ok, `${a} always refused`);
  }
});
