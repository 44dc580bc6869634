import t from 'tap';
import type { OutboundRole } from '../../bin/roles/outbound.js';
import { mtaStsPolicy, tlsRptCountsOf } from '../../storage/repos/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call, lastEventOf } from '../helpers/http.js';
import { startPolicyServer } from '../helpers/policy-server.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';
import { makeTestCa } from '../helpers/test-ca.js';

// Outbound MTA-STS (RFC 8461) end to end: policies served over HTTPS on loopback (a certificate
// from a test CA svc trusts through outbound_tls_ca_file) for domains in the loopback DNS zone,
// mail to a fake MX whose STARTTLS certificate the same CA signed for some MX names only.
t.setTimeout(120_000);

const ca = await makeTestCa();
const covered = ['mx.sts-enforce.net', 'mx.sts-mxlist.net', 'other.sts-mxlist.net', 'mx.sts-cached.net', 'mx.sts-broken.net', 'mx.plain-strict.net'];
const mxTls = await ca.issue(covered);
const policyHosts = ['sts-enforce.net', 'sts-mismatch.net', 'sts-mxlist.net', 'sts-testing.net', 'sts-cached.net', 'sts-broken.net'];
const policyServer = await startPolicyServer(await ca.issue(policyHosts.map((d) => `mta-sts.${d}`)));
const dns = await mailZone([...policyHosts, 'plain-strict.net']);
const mx = await startFakeMx({ dns: dns.address, tls: mxTls });
// A second MX on another loopback address, same port: the one sts-mxlist.net's policy leaves out.
const rogue = await startFakeMx({ host: '127.0.0.2', port: mx.port, tls: mxTls });
const publish = (domain: string, id: string, mode: string, mxPatterns: string[]) => {
  dns.set(`_mta-sts.${domain}`, [{ type: 'TXT', value: `v=STSv1; id=${id};` }]);
  dns.set(`mta-sts.${domain}`, [{ type: 'A', value: '127.0.0.1' }]);
  policyServer.policies.set(`mta-sts.${domain}`, `version: STSv1\nmode: ${mode}\n${mxPatterns.map((m) => `mx: ${m}\n`).join('')}max_age: 86400\n`);
};
publish('sts-enforce.net', 'e1', 'enforce', ['mx.sts-enforce.net']);
publish('sts-mismatch.net', 'm1', 'enforce', ['mx.sts-mismatch.net']);
publish('sts-mxlist.net', 'l1', 'enforce', ['mx.sts-mxlist.net']);
dns.set('sts-mxlist.net', [{ type: 'MX', exchange: 'other.sts-mxlist.net', priority: 5 }, { type: 'MX', exchange: 'mx.sts-mxlist.net', priority: 10 }]);
dns.set('other.sts-mxlist.net', [{ type: 'A', value: '127.0.0.2' }]);
publish('sts-testing.net', 't1', 'testing', ['mx.sts-testing.net']);
publish('sts-cached.net', 'c1', 'enforce', ['*.sts-cached.net']);
publish('sts-broken.net', 'b1', 'enforce', ['mx.sts-broken.net']);
policyServer.policies.set('mta-sts.sts-broken.net', 404);

const clock = testClock();
const app = await startTestAppliance({
  clock, roles: ['api', 'outbound'],
  env: {
    SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_REPLY_TIMEOUT_S: '3',
    SVC_OUTBOUND_TLS_CA_FILE: ca.caFile, SVC_MTA_STS_POLICY_PORT: String(policyServer.port), SVC_MTA_STS_ALLOW_PRIVATE: 'true',
    SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000',
  },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await rogue.stop(); await policyServer.stop(); await dns.stop(); });
const outbound = app.appliance.running.find((r) => r.name === 'outbound') as OutboundRole;
const db = app.appliance.services.database.db;
const team = await app.newTeam('MTA-STS');
const domains = fakeSendingDomains(app, dns);
domains.add({ teamId: team.teamId, name: 'sender.net' });
domains.add({ teamId: team.teamId, name: 'strict-sender.net', tls: 'enforced' });
const send = async (to: string, from = 'hello@sender.net') => {
  const r = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: { from, to, subject: 'Hello', text: 'Hi' } });
  if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
  return r.body.id as string;
};
const lastEvent = (id: string) => lastEventOf(app.baseUrl, team.token, id);
const until = (id: string, ...events: string[]) => waitFor(`${id} to reach ${events.join('/')}`, async () => { const e = await lastEvent(id); return events.includes(e) ? e : undefined; });
const at = (address: string) => mx.received.filter((m) => m.rcptTo === address);
const fetchesOf = (domain: string) => policyServer.fetches.filter((f) => f.host === `mta-sts.${domain}`).length;
const counts = async (domain: string) => {
  await outbound.flushTlsReport();
  const rows = await tlsRptCountsOf(db, domain, clock.now().toISOString().slice(0, 10));
  return Object.fromEntries(rows.map((r) => [`${r.mx_host || '-'} ${r.result}`, r.sessions]));
};

t.test('enforce, an MX the policy names, a valid certificate: delivered over verified TLS', async (t) => {
  const id = await send('ann@sts-enforce.net');
  await until(id, 'delivered');
  t.equal(at('ann@sts-enforce.net').length, 1);
  t.equal(at('ann@sts-enforce.net')[0]!.secure, true, 'over STARTTLS');
  t.equal(fetchesOf('sts-enforce.net'), 1, 'the policy was fetched once');
  t.match(await mtaStsPolicy(db, 'sts-enforce.net'), { policy_id: 'e1', mode: 'enforce', mx: '["mx.sts-enforce.net"]', max_age: 86400 });
  t.same(await counts('sts-enforce.net'), { 'mx.sts-enforce.net success': 1 }, 'a successful session counted for TLS-RPT');
});

t.test('enforce with a certificate not valid for the MX name: deferred, nothing sent in cleartext', async (t) => {
  const id = await send('bob@sts-mismatch.net');
  await until(id, 'delivery_delayed');
  t.equal(at('bob@sts-mismatch.net').length, 0, 'not delivered');
  t.equal(mx.received.filter((m) => !m.secure).length, 0, 'nothing ever went in cleartext');
  t.same(await counts('sts-mismatch.net'), { 'mx.sts-mismatch.net certificate-host-mismatch': 1 });
});

t.test('enforce: an MX host outside the policy is never used', async (t) => {
  const id = await send('cy@sts-mxlist.net');
  await until(id, 'delivered');
  t.equal(at('cy@sts-mxlist.net').length, 1, 'delivered to the policy\'s MX (the less preferred one)');
  t.equal(rogue.received.length, 0, 'the preferred MX outside the policy got nothing');
  t.equal(rogue.connections, 0, 'and was not even connected to');
});

t.test('testing mode with a bad certificate: delivered, the failure counted for TLS-RPT', async (t) => {
  const id = await send('dee@sts-testing.net');
  await until(id, 'delivered');
  t.equal(at('dee@sts-testing.net').length, 1);
  t.same(await counts('sts-testing.net'), { 'mx.sts-testing.net certificate-host-mismatch': 1 });
});

t.test('a policy is cached for its max_age; a new TXT id fetches it again', async (t) => {
  const first = await send('eve@sts-cached.net');
  await until(first, 'delivered');
  t.equal(fetchesOf('sts-cached.net'), 1);
  const second = await send('eve2@sts-cached.net');
  await until(second, 'delivered');
  t.equal(fetchesOf('sts-cached.net'), 1, 'the second delivery made no HTTPS fetch');
  // The domain moves its mail: a new policy under a new id, which now leaves the MX out.
  publish('sts-cached.net', 'c2', 'enforce', ['mx2.sts-cached.net']);
  const third = await send('eve3@sts-cached.net');
  await until(third, 'delivery_delayed');
  t.equal(fetchesOf('sts-cached.net'), 2, 'the new id was fetched');
  t.match(await mtaStsPolicy(db, 'sts-cached.net'), { policy_id: 'c2' });
  t.equal(at('eve3@sts-cached.net').length, 0, 'the MX the new policy leaves out got nothing');
});

t.test('a policy that cannot be fetched (and none cached): delivered as before, the fetch error counted', async (t) => {
  const id = await send('fay@sts-broken.net');
  await until(id, 'delivered');
  t.same(await counts('sts-broken.net'), { '- sts-policy-fetch-error': 1 });
});

t.test('a sending domain with tls enforced: delivered when the certificate verifies', async (t) => {
  const id = await send('gus@plain-strict.net', 'a@strict-sender.net');
  await until(id, 'delivered');
  t.equal(at('gus@plain-strict.net')[0]?.secure, true);
});
