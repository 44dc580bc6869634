import t from 'tap';
import { startFakeCloudflare } from '../helpers/fake-cloudflare.js';
import { startDomainsRig, txtStrings, type WireRecord } from '../helpers/domain-fixtures.js';

const cf = await startFakeCloudflare();
const rig = await startDomainsRig({ SVC_CLOUDFLARE_API_URL: cf.url });
t.teardown(async () => { await rig.stop(); await cf.stop(); });
const team = await rig.app.newTeam('Auto');
const db = rig.app.appliance.services.database.db;

cf.addZone('auto-corp.net');
cf.addZone('other-zone.net');
cf.addToken('zone-token', ['auto-corp.net']);
cf.addToken('multi-zone-token', ['auto-corp.net', 'other-zone.net']);
cf.addToken('wrong-zone-token', ['other-zone.net']);
cf.addToken('disabled-token', ['auto-corp.net'], 'disabled');
// Something the customer already has at the tracking name: svc must not touch it.
cf.addRecord('auto-corp.net', { type: 'CNAME', name: 'links.mail.auto-corp.net', content: 'tracker.elsewhere.net' });

const created = (await rig.api(team.token, 'POST', '/domains', { name: 'mail.auto-corp.net', click_tracking: true, tracking_subdomain: 'links' })).body;
const auto = (body?: unknown) => rig.api(team.token, 'POST', `/domains/${created.id}/autoconfigure`, body);

t.test('only a token scoped to exactly this zone is accepted', async (t) => {
  t.match(await auto({}), { status: 422, body: { name: 'missing_required_field' } });
  t.match(await auto({ api_token: 'multi-zone-token' }), { status: 422, body: { name: 'validation_error', errors: [{ path: 'api_token' }], message: /2 zones/ } });
  t.match(await auto({ api_token: 'wrong-zone-token' }), { status: 422, body: { name: 'validation_error', message: /other-zone\.net/ } });
  t.match(await auto({ api_token: 'disabled-token' }), { status: 422, body: { name: 'validation_error' } });
  t.match(await auto({ api_token: 'not-a-token' }), { status: 422, body: { name: 'validation_error', message: /401/ } });
  t.match(await auto({ api_token: '0123456789abcdef0123456789abcdef01234' }), { status: 422, body: { message: /Global API Key/ } });
  t.match(await auto({ api_token: 'zone-token', provider: 'route53' }), { status: 422, body: { errors: [{ path: 'provider' }] } });
  t.equal(cf.records.length, 1, 'nothing was written by a refused call');
});

t.test('writes the enabled capabilities\' records, never over existing ones, and forgets the token', async (t) => {
  const res = await auto({ api_token: 'zone-token' });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.match(res.body, { object: 'domain_autoconfigure', id: created.id, provider: 'cloudflare', zone: { name: 'auto-corp.net' }, token_kept: false });
  t.same(res.body.written.map((r: WireRecord) => r.record), ['DKIM', 'SPF']);
  t.same(res.body.conflicts.map((r: WireRecord) => r.record), ['Tracking']);
  t.same(res.body.conflicts[0].existing, [{ type: 'CNAME', content: 'tracker.elsewhere.net' }]);
  t.notOk([...res.body.written, ...res.body.conflicts].some((r: WireRecord) => r.record === 'Receiving'), 'receiving is off: its MX is not written');
  t.same(cf.recordsAt('links.mail.auto-corp.net').map((r) => r.content), ['tracker.elsewhere.net'], 'the existing record is untouched');
  const dkim = (created.records as WireRecord[]).find((r) => r.record === 'DKIM')!;
  const [cfDkim] = cf.recordsAt(`${dkim.name}.auto-corp.net`);
  t.match(cfDkim, { type: 'TXT', content: dkim.value });
  const [cfSend] = cf.recordsAt('send.mail.auto-corp.net');
  t.match(cfSend, { type: 'CNAME', content: 'bounces.us.svc-host.net', proxied: false, ttl: 1 });
  const posts = cf.requests.filter((r) => r.method === 'POST');
  t.equal(posts.length, 2);

  // Serve what was written at Cloudflare from the test DNS: the records verify as written.
  rig.dns.set(cfDkim!.name, [{ type: 'TXT', value: txtStrings(cfDkim!.content) }]);
  rig.dns.set(cfSend!.name, [{ type: 'CNAME', value: cfSend!.content }]);
  rig.clock.advance(16_000);
  const verified = await rig.api(team.token, 'POST', `/domains/${created.id}/verify`);
  t.same(verified.body.records.filter((r: WireRecord) => r.record === 'DKIM' || r.record === 'SPF').map((r: WireRecord) => r.status), ['verified', 'verified']);

  const again = await auto({ api_token: 'zone-token' });
  t.same(again.body.written, [], 'running again writes nothing');
  t.same(again.body.unchanged.map((r: WireRecord) => r.record), ['DKIM', 'SPF']);
  t.equal(cf.requests.filter((r) => r.method === 'POST').length, 2);
  t.match(await auto({}), { status: 422, body: { name: 'missing_required_field' } }, 'the token was not kept');
});

t.test('keep_token keeps it sealed until the credential is deleted', async (t) => {
  t.equal((await auto({ api_token: 'zone-token', keep_token: true })).body.token_kept, true);
  const row = await db.selectFrom('domains').select('provider_token').where('id', '=', created.id).executeTakeFirstOrThrow();
  t.ok(row.provider_token);
  t.notMatch(row.provider_token!, /zone-token/, 'sealed at rest');
  const kept = await auto();
  t.equal(kept.status, 200, 'a later call uses the kept token');
  t.equal(cf.requests.at(-1)!.token, 'zone-token');
  const removed = await rig.api(team.token, 'DELETE', `/domains/${created.id}/autoconfigure/credential`);
  t.match(removed, { status: 200, body: { object: 'autoconfigure_credential', id: created.id, deleted: true } });
  t.match(await auto({}), { status: 422, body: { name: 'missing_required_field' } });
  const other = await rig.app.newTeam('Stranger');
  t.match(await rig.api(other.token, 'POST', `/domains/${created.id}/autoconfigure`, { api_token: 'zone-token' }), { status: 404 });
});
