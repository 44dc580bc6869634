import t from 'tap';
import { find, publish, startDomainsRig, type WireRecord } from '../helpers/domain-fixtures.js';
import { routeRecipient } from '../../core/receiving/index.js';

const rig = await startDomainsRig();
t.teardown(() => rig.stop());
const db = rig.app.appliance.services.database.db;
const lookup = rig.app.appliance.services.domains;
/** RCPT TO's decision with the real domain lookup. */
const route = (address: string) => routeRecipient({
  domains: lookup, returnPaths: async () => undefined, mailboxes: { claims: async () => true }, feedbackAddress: 'feedback@svc-host.net', ownHosts: new Set(),
}, address);
const eventsOf = (type: string, teamId: string) =>
  db.selectFrom('events').selectAll().where('type', '=', type).where('team_id', '=', teamId).orderBy('seq').execute();

/** Adds a domain for a team and publishes its records so it verifies. */
async function verifiedDomain(token: string, name: string, body: Record<string, unknown> = {}) {
  const created = await rig.api(token, 'POST', '/domains', { name, ...body });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  for (const r of created.body.records as WireRecord[]) if (r.record !== 'Receiving') publish(rig.dns, name, r);
  rig.clock.advance(16_000);
  const verified = await rig.api(token, 'POST', `/domains/${created.body.id}/verify`);
  return verified.body;
}

t.test('a name another team holds verified is 409 resource_locked; the claim moves it', async (t) => {
  const a = await rig.app.newTeam('Holder');
  const b = await rig.app.newTeam('Claimant');
  const held = await verifiedDomain(a.token, 'claimed-corp.net');
  t.equal(held.status, 'verified');
  t.ok(await lookup.sendingDomain(a.teamId, 'claimed-corp.net'));

  const add = await rig.api(b.token, 'POST', '/domains', { name: 'claimed-corp.net' });
  t.match(add, { status: 409, body: { name: 'resource_locked', message: /claim/, claimable: true } });
  t.match(await rig.api(a.token, 'POST', '/domains/claim', { name: 'claimed-corp.net' }), { status: 422 }, 'the holder cannot claim its own name');
  t.match(await rig.api(b.token, 'POST', '/domains/claim', { name: 'nobody-holds.net' }), { status: 422 }, 'nothing to claim');

  const claim = await rig.api(b.token, 'POST', '/domains/claim', { name: 'claimed-corp.net', region: 'eu-west-1', click_tracking: true });
  t.equal(claim.status, 201);
  t.match(claim.body, { object: 'domain_claim', name: 'claimed-corp.net', status: 'pending', domain_id: null, region: 'eu-west-1', record: { type: 'TXT', name: '@', value: /^svc-domain-verification=[0-9a-f]{32}$/ } });
  const again = await rig.api(b.token, 'POST', '/domains/claim', { name: 'claimed-corp.net' });
  t.equal(again.body.id, claim.body.id, 'asking again returns the pending claim');
  t.match((await rig.api(b.token, 'GET', `/domains/${claim.body.id}/claim`)).body, { id: claim.body.id, status: 'pending' });
  t.match(await rig.api(a.token, 'GET', `/domains/${claim.body.id}/claim`), { status: 404 }, 'another team cannot see the claim');

  t.match((await rig.api(b.token, 'POST', `/domains/${claim.body.id}/claim/verify`)).body, { status: 'pending' }, 'nothing published yet');
  rig.dns.add('claimed-corp.net', { type: 'TXT', value: claim.body.record.value });
  const done = await rig.api(b.token, 'POST', `/domains/${claim.body.id}/claim/verify`);
  t.match(done.body, { status: 'completed', domain_id: claim.body.id });

  const moved = await rig.api(b.token, 'GET', `/domains/${claim.body.id}`);
  t.match(moved.body, { id: claim.body.id, name: 'claimed-corp.net', region: 'eu-west-1', click_tracking: true, status: 'not_started' });
  const old = await rig.api(a.token, 'GET', `/domains/${held.id}`);
  t.match(old.body, { status: 'failed', failure_reason: 'claimed_by_another_team' }, 'the previous copy is kept, marked');
  t.notOk(await lookup.sendingDomain(a.teamId, 'claimed-corp.net'), 'the previous team can no longer send from it');
  t.notOk(await lookup.isVerifiedDomain(a.teamId, held.id));
  const queries = rig.dns.queries.length;
  rig.clock.advance(16_000);
  t.match((await rig.api(a.token, 'POST', `/domains/${held.id}/verify`)).body, { status: 'failed' });
  t.equal(rig.dns.queries.length, queries, 'a released copy is never checked again');
  t.match(await rig.api(a.token, 'POST', '/domains', { name: 'claimed-corp.net' }), { status: 409, body: { name: 'resource_locked' } }, 'and cannot be re-added');
  t.ok((await eventsOf('domain.updated', a.teamId)).some((e) => JSON.parse(e.data).failure_reason === 'claimed_by_another_team'));
  t.ok((await eventsOf('domain.created', b.teamId)).some((e) => JSON.parse(e.data).id === claim.body.id));

  // The claimant publishes its own records and sends.
  for (const r of moved.body.records as WireRecord[]) if (r.record !== 'Receiving') publish(rig.dns, 'claimed-corp.net', r);
  rig.clock.advance(16_000);
  t.has((await rig.api(b.token, 'POST', `/domains/${claim.body.id}/verify`)).body, { status: 'verified' });
  t.match(await lookup.sendingDomain(b.teamId, 'claimed-corp.net'), { teamId: b.teamId, region: 'eu-west-1' });
});

t.test('a claim whose TXT record never appears expires after 7 days', async (t) => {
  const a = await rig.app.newTeam('Keeper');
  const b = await rig.app.newTeam('Late');
  await verifiedDomain(a.token, 'kept-corp.net');
  const claim = (await rig.api(b.token, 'POST', '/domains/claim', { name: 'kept-corp.net' })).body;
  rig.clock.advance(8 * 86400_000);
  rig.dns.add('kept-corp.net', { type: 'TXT', value: claim.record.value });
  t.equal((await rig.api(b.token, 'POST', `/domains/${claim.id}/claim/verify`)).body.status, 'expired');
  t.match(await lookup.sendingDomain(a.teamId, 'kept-corp.net'), { teamId: a.teamId }, 'the holder keeps the name');
});

t.test('a second team verifying a name first held elsewhere is refused', async (t) => {
  const a = await rig.app.newTeam('First');
  const b = await rig.app.newTeam('Second');
  const early = await rig.api(b.token, 'POST', '/domains', { name: 'race-corp.net' });
  t.equal(early.status, 201, 'unverified copies may exist in several teams');
  await verifiedDomain(a.token, 'race-corp.net');
  for (const r of early.body.records as WireRecord[]) publish(rig.dns, 'race-corp.net', r);
  rig.clock.advance(16_000);
  t.match(await rig.api(b.token, 'POST', `/domains/${early.body.id}/verify`), { status: 409, body: { name: 'resource_locked' } });
  t.notOk(await lookup.sendingDomain(b.teamId, 'race-corp.net'));
});

t.test('receiving: MX in use elsewhere is 409 unless confirmed; receivingDomain answers for the holder', async (t) => {
  const team = await rig.app.newTeam('Receiver');
  rig.dns.set('inbox-corp.net', [{ type: 'MX', exchange: 'aspmx.l.google.com', priority: 1 }]);
  const refused = await rig.api(team.token, 'POST', '/domains', { name: 'inbox-corp.net', capabilities: { receiving: 'enabled' } });
  t.match(refused, { status: 409, body: { name: 'receiving_mx_in_use', message: /aspmx\.l\.google\.com/ } });
  const created = await rig.api(team.token, 'POST', '/domains', { name: 'inbox-corp.net' });
  t.equal(created.status, 201, 'receiving off needs no check');
  const patch = await rig.api(team.token, 'PATCH', `/domains/${created.body.id}`, { capabilities: { receiving: 'enabled' } });
  t.match(patch, { status: 409, body: { name: 'receiving_mx_in_use' } });
  const confirmed = await rig.api(team.token, 'PATCH', `/domains/${created.body.id}`, { capabilities: { receiving: 'enabled' }, confirm_replace_mx: true });
  t.equal(confirmed.status, 200);
  t.notOk(await lookup.receivingDomain('inbox-corp.net'), 'not before the team holds the name');
  t.equal(await lookup.whyNotReceiving('inbox-corp.net'), 'unverified');
  t.same(await route('ann@inbox-corp.net'), { kind: 'refused', code: 450, message: '4.7.1 inbox-corp.net is not verified on this server yet, try again later' },
    'not yet verified: the sender is told so and retries');
  t.same(await route('postmaster@inbox-corp.net'), { kind: 'refused', code: 450, message: '4.7.1 inbox-corp.net is not verified on this server yet, try again later' });
  t.same(await route('ann@nobody-here.net'), { kind: 'refused', code: 550, message: '5.7.1 Relay access denied' }, 'a domain svc does not know: relaying');
  rig.dns.remove('inbox-corp.net');
  for (const r of created.body.records as WireRecord[]) publish(rig.dns, 'inbox-corp.net', r);
  rig.clock.advance(16_000);
  const verified = await rig.api(team.token, 'POST', `/domains/${created.body.id}/verify`);
  t.has(find(verified.body.records, 'Receiving'), { status: 'verified' });
  t.equal(verified.body.status, 'verified', 'receiving on: the MX is required and verified');
  t.same(await lookup.receivingDomain('INBOX-corp.net'), { teamId: team.teamId, domainId: created.body.id, name: 'inbox-corp.net' });

  // Moving receiving to a host whose MX is already svc's needs no confirmation.
  rig.dns.set('mail.inbox-corp.net', [{ type: 'MX', exchange: 'inbound.us.svc-host.net', priority: 10 }]);
  const moved = await rig.api(team.token, 'PATCH', `/domains/${created.body.id}`, { receiving_host: 'mail' });
  t.equal(moved.status, 200, JSON.stringify(moved.body));
  t.match(await lookup.receivingDomain('mail.inbox-corp.net'), { domainId: created.body.id });
  t.notOk(await lookup.receivingDomain('inbox-corp.net'));
  await rig.api(team.token, 'PATCH', `/domains/${created.body.id}`, { capabilities: { receiving: 'disabled' } });
  t.notOk(await lookup.receivingDomain('mail.inbox-corp.net'), 'receiving off: no longer answered');
  t.same(await route('ann@mail.inbox-corp.net'), { kind: 'refused', code: 550, message: '5.7.1 mail.inbox-corp.net does not receive mail on this server (receiving is off)' });

  rig.dns.set('nullmx-corp.net', [{ type: 'MX', exchange: '.', priority: 0 }]);
  t.equal((await rig.api(team.token, 'POST', '/domains', { name: 'nullmx-corp.net', capabilities: { receiving: 'enabled' } })).status, 201, 'a null MX delivers nowhere');
  t.equal((await rig.api(team.token, 'POST', '/domains', { name: 'no-mx-corp.net', capabilities: { receiving: 'enabled' } })).status, 201, 'no MX at all');
});
