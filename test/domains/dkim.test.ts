import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promises as dnsPromises } from 'node:dns';
import t from 'tap';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { SendingDomain } from '../../core/domains/lookup.js';
import { withDeadline } from '../helpers/deadline.js';
import { absolute, find, publish, startDomainsRig, type WireRecord } from '../helpers/domain-fixtures.js';

const rig = await startDomainsRig();
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Signer');
const lookup = rig.app.appliance.services.domains;

// Independent verifiers read the key record through the same loopback DNS server.
const resolver = new dnsPromises.Resolver({ timeout: 1000, tries: 1 });
resolver.setServers([rig.dns.address]);
const mailauthResolver = (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]>;
const [dnsHost, dnsPort] = rig.dns.address.split(':') as [string, string];

const message = (from: string) => [
  `From: Sender <hello@${from}>`, 'To: someone@receiver-corp.net', 'Subject: DKIM test', `Date: ${new Date().toUTCString()}`,
  `Message-ID: <dkim-test-${Date.now()}@${from}>`, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '',
  'Hello, this message is signed with the domain key.', '',
].join('\r\n');

async function sign(domain: SendingDomain, raw: string): Promise<string> {
  const key = { signingDomain: domain.dkim.domain, selector: domain.dkim.selector, privateKey: domain.dkim.privateKeyPem };
  const signed = await dkimSign(raw, { ...key, signatureData: [key] });
  if (signed.errors?.length) throw new Error(JSON.stringify(signed.errors));
  return signed.signatures + raw;
}

async function mailauthVerdict(signed: string): Promise<string | undefined> {
  const result = await dkimVerify(signed, { resolver: mailauthResolver });
  return result.results[0]?.status?.result;
}

// dkimpy (Debian's python3-dkim, the library behind `dkimverify`). dkimverify itself asks the
// system resolver and has no option to change it, so the same library is called with a dnsfunc
// that asks the loopback DNS server through dnspython.
const python = '/usr/bin/python3';
const dkimpyScript = `
import sys, dkim, dns.resolver
r = dns.resolver.Resolver(configure=False)
r.nameservers = [sys.argv[1]]
r.port = int(sys.argv[2])
def txt(name, timeout=5):
    try:
        answer = r.resolve(name.decode().rstrip('.'), 'TXT', lifetime=timeout)
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
        return None
    return b''.join(answer[0].strings)
print('pass' if dkim.verify(sys.stdin.buffer.read(), dnsfunc=txt) else 'fail')
`;
const hasDkimpy = existsSync(python) && spawnSync(python, ['-c', 'import dkim, dns.resolver']).status === 0;
/** The dkimpy subtests run where python3-dkim is installed and are skipped, saying why, elsewhere. */
const dkimpy = { skip: hasDkimpy ? false : 'python3-dkim (dkimpy) is not installed on this machine' };

/** Runs dkimpy in a child; asynchronously, since the DNS server it asks lives in this process. */
function dkimpyVerdict(signed: string): Promise<string> {
  const child = spawn(python, ['-c', dkimpyScript, dnsHost, dnsPort]);
  const verdict = new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(err))));
    child.stdin.end(signed);
  });
  return withDeadline('dkimpy to give its verdict', verdict).catch((err: unknown) => { child.kill('SIGKILL'); throw err; });
}

async function verifiedDomain(name: string) {
  const created = (await rig.api(team.token, 'POST', '/domains', { name })).body;
  for (const r of created.records as WireRecord[]) publish(rig.dns, name, r);
  rig.clock.advance(16_000);
  await rig.api(team.token, 'POST', `/domains/${created.id}/verify`);
  return created;
}

t.test('a message signed with the domain key verifies against the TXT record exactly as published', async (t) => {
  const created = await verifiedDomain('signed-corp.net');
  const domain = await lookup.sendingDomain(team.teamId, 'signed-corp.net');
  t.ok(domain, 'the domain sends');
  const signed = await sign(domain!, message('signed-corp.net'));
  t.match(signed, /^DKIM-Signature: .*d=signed-corp\.net/s);
  t.equal(await mailauthVerdict(signed), 'pass', 'mailauth verifies');
  t.equal(await mailauthVerdict(signed.replace('Hello,', 'Hullo,')), 'neutral', 'a changed body does not (body hash mismatch)');
  await t.test('dkimpy (python3-dkim) agrees', dkimpy, async (t) => {
    t.equal(await dkimpyVerdict(signed), 'pass', 'dkimpy (python3-dkim) verifies');
    t.equal(await dkimpyVerdict(signed.replace('Subject: DKIM test', 'Subject: DKIM tset')), 'fail', 'a changed header does not');
  });
  // Without the record, verification fails: the signature really rests on the published key.
  rig.dns.remove(absolute('signed-corp.net', find(created.records, 'DKIM').name));
  t.not(await mailauthVerdict(signed), 'pass');
});

t.test('DKIM rotation: new selector beside the old, switch after it verifies, old key retired after the grace period', async (t) => {
  const created = await verifiedDomain('rotating-corp.net');
  const oldKey = (await lookup.sendingDomain(team.teamId, 'rotating-corp.net'))!.dkim;
  const rotated = await rig.api(team.token, 'POST', `/domains/${created.id}/dkim/rotate`);
  t.equal(rotated.status, 200);
  const dkims = (rotated.body.records as WireRecord[]).filter((r) => r.record === 'DKIM');
  t.equal(dkims.length, 2, 'the new selector is published beside the old');
  t.equal(dkims[0]!.name, `${oldKey.selector}._domainkey`);
  t.has(dkims[0], { status: 'verified' });
  t.has(dkims[1], { status: 'not_started' });
  t.not(dkims[1]!.name, dkims[0]!.name);
  t.has(rotated.body, { status: 'verified' }, 'the pending key does not unverify the domain');
  t.match(await rig.api(team.token, 'POST', `/domains/${created.id}/dkim/rotate`), { status: 409, body: { name: 'resource_locked' } });
  t.equal((await lookup.sendingDomain(team.teamId, 'rotating-corp.net'))!.dkim.selector, oldKey.selector, 'still signing with the old key');

  publish(rig.dns, 'rotating-corp.net', dkims[1]!);
  rig.clock.advance(16_000);
  const switched = await rig.api(team.token, 'POST', `/domains/${created.id}/verify`);
  t.has(switched.body, { status: 'verified' });
  const newKey = (await lookup.sendingDomain(team.teamId, 'rotating-corp.net'))!.dkim;
  t.equal(`${newKey.selector}._domainkey`, dkims[1]!.name, 'signing switched to the new key once its record verified');
  t.equal((switched.body.records as WireRecord[]).filter((r) => r.record === 'DKIM').length, 2, 'the old record stays listed through the grace period');
  const signed = await sign((await lookup.sendingDomain(team.teamId, 'rotating-corp.net'))!, message('rotating-corp.net'));
  t.equal(await mailauthVerdict(signed), 'pass');
  await t.test('dkimpy (python3-dkim) verifies the new key too', dkimpy, async (t) => {
    t.equal(await dkimpyVerdict(signed), 'pass');
  });

  rig.clock.advance(49 * 3600_000);
  const jobs = rig.app.appliance.running.find((r) => r.name === 'jobs') as unknown as { scheduler: { runNow(n: string): Promise<boolean> } };
  await jobs.scheduler.runNow('recheck-domains');
  const after = await rig.api(team.token, 'GET', `/domains/${created.id}`);
  const left = (after.body.records as WireRecord[]).filter((r) => r.record === 'DKIM');
  t.same(left.map((r) => r.name), [dkims[1]!.name], 'the old key is retired and its record leaves the list');
  t.has(after.body, { status: 'verified' });
  t.equal((await lookup.sendingDomain(team.teamId, 'rotating-corp.net'))!.dkim.selector, newKey.selector);
});
