import t from 'tap';
import { Resend } from 'resend';
import { runAdmin } from '../../bin/admin-commands.js';
import { find, publish, startDomainsRig, type WireRecord } from '../helpers/domain-fixtures.js';

// The hosted-email SDK, unchanged, pointed at svc; then the operator's `svc admin domain …`.
const rig = await startDomainsRig();
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('SDK');
const resend = new Resend(team.token, { baseUrl: rig.app.baseUrl });

t.test('domains.create/list/get/update/verify/remove work against svc', async (t) => {
  const created = await resend.domains.create({ name: 'sdk-corp.net', region: 'eu-west-1', openTracking: true, tls: 'enforced' });
  t.equal(created.error, null, JSON.stringify(created.error));
  const id = created.data!.id;
  t.match(created.data, { name: 'sdk-corp.net', region: 'eu-west-1', status: 'not_started', open_tracking: true, capabilities: { sending: 'enabled', receiving: 'disabled' } });
  t.ok(created.data!.records.some((r) => r.record === 'DKIM' && r.type === 'TXT'));

  const listed = await resend.domains.list();
  t.equal(listed.error, null);
  t.same(listed.data!.data.map((d) => d.id), [id]);
  t.equal(listed.data!.has_more, false);

  const got = await resend.domains.get(id);
  t.equal(got.error, null);
  t.match(got.data, { object: 'domain', id, name: 'sdk-corp.net' });

  const updated = await resend.domains.update({ id, clickTracking: true, tls: 'opportunistic' });
  t.same(updated.data, { object: 'domain', id });
  t.match((await resend.domains.get(id)).data, { click_tracking: true, tls: 'opportunistic' });

  for (const r of got.data!.records as unknown as WireRecord[]) publish(rig.dns, 'sdk-corp.net', r);
  rig.clock.advance(16_000);
  const verified = await resend.domains.verify(id);
  t.equal(verified.error, null);
  t.match(verified.data, { object: 'domain', id });
  t.equal((await resend.domains.get(id)).data!.status, 'verified');

  const missing = await resend.domains.get('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
  t.match(missing.error, { name: 'not_found', statusCode: 404 });

  const removed = await resend.domains.remove(id);
  t.same(removed.data, { object: 'domain', id, deleted: true });
  t.match((await resend.domains.get(id)).error, { name: 'not_found' });
});

t.test('domains.claims.create/get/verify work against svc', async (t) => {
  const holder = await rig.app.newTeam('Holder');
  const held = (await rig.api(holder.token, 'POST', '/domains', { name: 'sdk-claim.net' })).body;
  for (const r of held.records as WireRecord[]) publish(rig.dns, 'sdk-claim.net', r);
  rig.clock.advance(16_000);
  await rig.api(holder.token, 'POST', `/domains/${held.id}/verify`);
  const claim = await resend.domains.claims.create({ name: 'sdk-claim.net' });
  t.equal(claim.error, null, JSON.stringify(claim.error));
  t.match(claim.data, { object: 'domain_claim', status: 'pending', record: { type: 'TXT', ttl: 'Auto' } });
  t.match((await resend.domains.claims.get(claim.data!.id)).data, { id: claim.data!.id, status: 'pending' });
  rig.dns.add('sdk-claim.net', { type: 'TXT', value: claim.data!.record.value });
  const verified = await resend.domains.claims.verify(claim.data!.id);
  t.match(verified.data, { status: 'completed', domain_id: claim.data!.id });
});

t.test('svc admin domain list | verify on the operator socket', async (t) => {
  const created = (await rig.api(team.token, 'POST', '/domains', { name: 'admin-corp.net' })).body;
  const lines: string[] = [];
  const out = (line: string) => lines.push(line);
  t.equal(await runAdmin(rig.app.adminSocket, ['domain', 'list', '--team', team.teamId], out), 0);
  t.ok(lines.some((l) => l.includes(created.id) && l.includes('admin-corp.net') && l.includes('not_started')), lines.join('\n'));
  lines.length = 0;
  t.equal(await runAdmin(rig.app.adminSocket, ['domain', 'verify', created.id], out), 1, 'not verified: exit 1');
  t.match(lines[0], new RegExp(`^${created.id}\\s+pending\\s+admin-corp.net`));
  t.match(lines.join('\n'), /DKIM\s+TXT\s+svc[0-9a-f]{10}\._domainkey\.admin-corp\.net\.\s+pending\n\s+expected "p=[^"]+"; DNS has no such record at this name/,
    'each record says what was expected and what DNS answered');
  for (const r of created.records as WireRecord[]) publish(rig.dns, 'admin-corp.net', r);
  lines.length = 0;
  t.equal(await runAdmin(rig.app.adminSocket, ['domain', 'verify', created.id], out), 0, 'the operator verifies without the 15-s guard');
  t.match(lines.join('\n'), /DKIM\s+TXT\s+svc[0-9a-f]{10}\._domainkey\.admin-corp\.net\.\s+verified/);
  t.equal(find((await rig.api(team.token, 'GET', `/domains/${created.id}`)).body.records, 'SPF').status, 'verified');
  lines.length = 0;
  t.equal(await runAdmin(rig.app.adminSocket, ['domain', 'verify', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'], out), 1);
  t.match(lines[0], /not_found/);
});
