import t from 'tap';
import { absolute, find, publish, startDomainsRig, txtStrings, type WireRecord } from '../helpers/domain-fixtures.js';

const rig = await startDomainsRig();
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Acme');
const db = rig.app.appliance.services.database.db;
const lookup = rig.app.appliance.services.domains;
const eventsOf = (type: string) => db.selectFrom('events').selectAll().where('type', '=', type).orderBy('seq').execute();

t.test('POST /domains returns the records to publish, named relative to the zone', async (t) => {
  const res = await rig.api(team.token, 'POST', '/domains', { name: 'Acme-Mail.net' });
  t.equal(res.status, 201);
  const d = res.body;
  t.match(d, { object: 'domain', name: 'acme-mail.net', region: 'us-east-1', status: 'not_started', capabilities: { sending: 'enabled', receiving: 'disabled' } });
  const records = d.records as WireRecord[];
  t.same(records.map((r) => [r.record, r.type]), [['DKIM', 'TXT'], ['SPF', 'CNAME'], ['Receiving', 'MX'], ['Tracking', 'CNAME']]);
  const dkim = find(records, 'DKIM');
  t.match(dkim.name, /^svc[0-9a-f]{10}\._domainkey$/);
  const strings = txtStrings(dkim.value);
  t.equal(strings.length, 2, 'the key is published as two quoted strings');
  t.match(strings.join(''), /^p=MII[A-Za-z0-9+/=]+$/, 'bare p= value, no v=/k= tags');
  t.ok(strings.every((s) => s.length <= 255));
  t.equal(Buffer.from(strings.join('').slice(2), 'base64').length, 294, 'a 2048-bit RSA SubjectPublicKeyInfo');
  t.match(find(records, 'SPF'), { name: 'send', type: 'CNAME', value: 'bounces.us.svc-host.net.', status: 'not_started' });
  t.match(find(records, 'Receiving'), { name: '@', type: 'MX', value: 'inbound.us.svc-host.net.', priority: 10 });
  t.match(find(records, 'Tracking'), { name: 'links', type: 'CNAME', value: 'track.us.svc-host.net.' });
  t.equal(find(records, 'Receiving').optional, true, 'receiving is off: its record is optional');
  t.equal(find(records, 'Tracking').optional, true, 'tracking is off: its record is optional');
  t.equal(find(records, 'SPF').optional, undefined, 'sending is on: its record is not');
  t.equal(dkim.optional, undefined);
  const created = await eventsOf('domain.created');
  t.equal(created.length, 1, 'domain.created written with the domain');
  const data = JSON.parse(created[0]!.data);
  t.equal(data.id, d.id);
  t.notMatch(created[0]!.data, /PRIVATE KEY|private_key/, 'no key material in the event');
});

t.test('a subdomain gets the suffix on every name; region, labels and tracking options are kept', async (t) => {
  const res = await rig.api(team.token, 'POST', '/domains', {
    name: 'news.acme-mail.co.uk', region: 'eu-west-1', custom_return_path: 'bounce', tracking_subdomain: 'click',
    open_tracking: true, tls: 'enforced',
  });
  t.equal(res.status, 201, JSON.stringify(res.body));
  const records = res.body.records as WireRecord[];
  t.match(find(records, 'DKIM').name, /^svc[0-9a-f]{10}\._domainkey\.news$/);
  t.match(find(records, 'SPF'), { name: 'bounce.news', value: 'bounces.eu.svc-host.net.' });
  t.match(find(records, 'Receiving'), { name: 'news', value: 'inbound.eu.svc-host.net.' });
  t.match(find(records, 'Tracking'), { name: 'click.news', value: 'track.eu.svc-host.net.' });
  t.match(res.body, { region: 'eu-west-1', open_tracking: true, click_tracking: false, tls: 'enforced', custom_return_path: 'bounce' });
});

t.test('regions without inbound get no Receiving record and cannot turn receiving on', async (t) => {
  const res = await rig.api(team.token, 'POST', '/domains', { name: 'south.acme-mail.net', region: 'sa-east-1' });
  t.equal(res.status, 201);
  t.notOk((res.body.records as WireRecord[]).some((r) => r.record === 'Receiving'));
  const refused = await rig.api(team.token, 'POST', '/domains', { name: 'south2.acme-mail.net', region: 'sa-east-1', capabilities: { receiving: 'enabled' } });
  t.match(refused, { status: 422, body: { name: 'validation_error', errors: [{ path: 'capabilities.receiving' }] } });
  const patch = await rig.api(team.token, 'PATCH', `/domains/${res.body.id}`, { capabilities: { receiving: 'enabled' } });
  t.equal(patch.status, 422);
  const moved = await rig.api(team.token, 'PATCH', `/domains/${res.body.id}`, { region: 'us-east-1' });
  t.match(moved, { status: 422, body: { name: 'validation_error', errors: [{ path: 'region' }] } }, 'the region is fixed after creation');
  const same = await rig.api(team.token, 'PATCH', `/domains/${res.body.id}`, { region: 'sa-east-1', click_tracking: true });
  t.match(same, { status: 200, body: { object: 'domain', id: res.body.id } });
});

t.test('bad input is refused with the spec\'s error names', async (t) => {
  t.match(await rig.api(team.token, 'POST', '/domains', { name: 'x.acme-mail.net', region: 'mars-1' }), { status: 422, body: { name: 'validation_error', errors: [{ path: 'region' }] } });
  t.match(await rig.api(team.token, 'POST', '/domains', {}), { status: 422, body: { name: 'missing_required_field' } });
  for (const name of ['localhost', 'mail.example.com', 'box.test', '10.1.2.3', 'no_underscores.net', 'com']) {
    t.match(await rig.api(team.token, 'POST', '/domains', { name }), { status: 422, body: { name: 'validation_error' } }, name);
  }
  t.match(await rig.api(team.token, 'POST', '/domains', { name: 'y.acme-mail.net', custom_return_path: 'links' }),
    { status: 422, body: { name: 'validation_error', details: { reason: 'return_path_in_use' } } });
  t.match(await rig.api(team.token, 'POST', '/domains', { name: 'acme-mail.net' }), { status: 422, body: { errors: [{ path: 'name' }] } }, 'the same team adding a name twice');
  t.match(await rig.api(team.token, 'POST', '/domains', { name: 'z.acme-mail.net', bogus: 1 }), { status: 400, body: { name: 'validation_error' } });
  t.match(await rig.api(team.token, 'GET', '/domains/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'), { status: 404, body: { name: 'not_found' } });
});

t.test('verify: published records verify; the domain then sends, and a sending key can be pinned to it', async (t) => {
  const created = (await rig.api(team.token, 'POST', '/domains', { name: 'verify-me.net' })).body;
  t.notOk(await lookup.sendingDomain(team.teamId, 'verify-me.net'));
  const before = await rig.api(team.token, 'POST', `/domains/${created.id}/verify`);
  t.match(before.body, { object: 'domain', status: 'pending' });
  t.ok((before.body.records as WireRecord[]).every((r) => r.status === 'pending'));
  for (const r of created.records as WireRecord[]) if (r.record !== 'Receiving') publish(rig.dns, 'verify-me.net', r);
  rig.clock.advance(16_000);
  const after = await rig.api(team.token, 'POST', `/domains/${created.id}/verify`);
  t.equal(after.status, 200);
  t.has(after.body, { object: 'domain', id: created.id, status: 'verified' });
  t.has(find(after.body.records, 'DKIM'), { status: 'verified' });
  t.has(find(after.body.records, 'SPF'), { status: 'verified' });
  t.match(find(after.body.records, 'Receiving'), { status: 'pending' }, 'an unneeded record is still reported');
  const sending = await lookup.sendingDomain(team.teamId, 'Verify-Me.net');
  t.match(sending, { id: created.id, teamId: team.teamId, name: 'verify-me.net', region: 'us-east-1', tls: 'opportunistic', returnPathHost: 'send.verify-me.net', trackingHost: 'links.verify-me.net' });
  t.match(sending!.dkim, { selector: find(created.records, 'DKIM').name.split('.')[0], domain: 'verify-me.net', privateKeyPem: /BEGIN PRIVATE KEY/ });
  t.ok(await lookup.isVerifiedDomain(team.teamId, created.id));
  t.ok((await lookup.verifiedDomainNames()).includes('verify-me.net'));
  const key = await rig.api(team.token, 'POST', '/api-keys', { name: 'pinned', permission: 'sending_access', domain_id: created.id });
  t.equal(key.status, 201, 'a sending key can be pinned to a verified domain');
  const updated = await eventsOf('domain.updated');
  t.ok(updated.some((e) => JSON.parse(e.data).id === created.id && JSON.parse(e.data).status === 'verified'));
});

t.test('a repeat verify within 15 s answers from state without asking DNS; the re-check finds the drift', async (t) => {
  const created = (await rig.api(team.token, 'POST', '/domains', { name: 'drifty.net' })).body;
  const dkim = find(created.records, 'DKIM');
  for (const r of created.records as WireRecord[]) publish(rig.dns, 'drifty.net', r);
  rig.clock.advance(16_000);
  t.has((await rig.api(team.token, 'POST', `/domains/${created.id}/verify`)).body, { status: 'verified' });
  rig.dns.remove(absolute('drifty.net', dkim.name));
  const queries = rig.dns.queries.length;
  rig.clock.advance(10_000);
  const repeat = await rig.api(team.token, 'POST', `/domains/${created.id}/verify`);
  t.has(repeat.body, { status: 'verified' }, 'current state');
  t.equal(rig.dns.queries.length, queries, 'no DNS query within 15 seconds');
  const eventsBefore = (await eventsOf('domain.updated')).length;
  const jobs = rig.app.appliance.running.find((r) => r.name === 'jobs') as unknown as { scheduler: { runNow(n: string): Promise<boolean> } };
  t.ok(await jobs.scheduler.runNow('recheck-domains'));
  const after = (await rig.api(team.token, 'GET', `/domains/${created.id}`)).body;
  t.match(find(after.records, 'DKIM'), { status: 'drifted' });
  t.has(find(after.records, 'SPF'), { status: 'verified' });
  t.equal(after.status, 'partially_verified');
  const updated = (await eventsOf('domain.updated')).slice(eventsBefore).map((e) => JSON.parse(e.data));
  t.ok(updated.some((d) => d.id === created.id && find(d.records, 'DKIM').status === 'drifted'), 'domain.updated raised with the drifted record');
  t.notOk(await lookup.sendingDomain(team.teamId, 'drifty.net'), 'a drifted DKIM record stops sending');
  publish(rig.dns, 'drifty.net', dkim);
  rig.clock.advance(16_000);
  t.has((await rig.api(team.token, 'POST', `/domains/${created.id}/verify`)).body, { status: 'verified' }, 'publishing it again heals it');
  t.ok(await lookup.sendingDomain(team.teamId, 'drifty.net'));
});

t.test('a DNS failure does not drift a verified record', async (t) => {
  const created = (await rig.api(team.token, 'POST', '/domains', { name: 'flaky.net' })).body;
  for (const r of created.records as WireRecord[]) publish(rig.dns, 'flaky.net', r);
  rig.clock.advance(16_000);
  t.has((await rig.api(team.token, 'POST', `/domains/${created.id}/verify`)).body, { status: 'verified' });
  rig.dns.set(absolute('flaky.net', find(created.records, 'DKIM').name), 'SERVFAIL');
  rig.clock.advance(16_000);
  const again = await rig.api(team.token, 'POST', `/domains/${created.id}/verify`);
  t.has(find(again.body.records, 'DKIM'), { status: 'verified' });
});

t.test('a record never seen within the verification window is failed; IDNs are stored as A-labels', async (t) => {
  const created = (await rig.api(team.token, 'POST', '/domains', { name: 'Bücher-Shop.de' })).body;
  t.equal(created.name, 'xn--bcher-shop-9db.de');
  t.equal((await rig.api(team.token, 'POST', `/domains/${created.id}/verify`)).body.status, 'pending');
  rig.clock.advance(73 * 3600_000);
  const late = await rig.api(team.token, 'POST', `/domains/${created.id}/verify`);
  t.equal(late.body.status, 'failed');
  t.equal(find(late.body.records, 'DKIM').status, 'failed');
  for (const r of created.records as WireRecord[]) publish(rig.dns, created.name, r);
  rig.clock.advance(16_000);
  t.equal((await rig.api(team.token, 'POST', `/domains/${created.id}/verify`)).body.status, 'verified', 'a failed record still verifies once published');
});

t.test('list, get, update and delete', async (t) => {
  const list = await rig.api(team.token, 'GET', '/domains?limit=2');
  t.match(list.body, { object: 'list', has_more: true });
  t.equal(list.body.data.length, 2);
  t.notOk('records' in list.body.data[0], 'list items leave the records out');
  const next = await rig.api(team.token, 'GET', `/domains?limit=100&after=${list.body.data[1].id}`);
  t.notOk(next.body.data.some((d: { id: string }) => d.id === list.body.data[0].id));
  const other = await rig.app.newTeam('Other');
  t.match(await rig.api(other.token, 'GET', `/domains/${list.body.data[0].id}`), { status: 404 }, 'another team\'s domain is 404');
  const id = list.body.data[0].id;
  const patched = await rig.api(team.token, 'PATCH', `/domains/${id}`, { click_tracking: true, tracking_subdomain: 'go' });
  t.match(patched, { status: 200, body: { object: 'domain', id } });
  t.match((await rig.api(team.token, 'GET', `/domains/${id}`)).body, { click_tracking: true, tracking_subdomain: 'go' });
  const deleted = await rig.api(team.token, 'DELETE', `/domains/${id}`);
  t.match(deleted, { status: 200, body: { object: 'domain', id, deleted: true } });
  t.match(await rig.api(team.token, 'GET', `/domains/${id}`), { status: 404 });
  t.ok((await eventsOf('domain.deleted')).some((e) => JSON.parse(e.data).id === id));
});
