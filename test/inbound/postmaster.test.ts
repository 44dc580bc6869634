import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { rawSmtp } from '../helpers/raw-smtp.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';

// RFC 5321 section 4.5.1: postmaster is accepted at the appliance's own host names (kept for the
// operator under the spool's postmaster/ folder, one log line each), as the bare `postmaster`, and
// at every receiving domain (that domain's team's mail, claimed whatever the mailbox policy).
// Any other domain is still relaying.
t.setTimeout(60_000);
const logLines: Record<string, any>[] = [];
const rig = await startInboundRig({
  env: { SVC_LOG_LEVEL: 'info', SVC_REGIONS: JSON.stringify({ 'eu-west-1': { inbound_host: 'MX-EU.svc-test.net' } }) },
  logDestination: { write: (line) => { logLines.push(JSON.parse(line) as Record<string, any>); } },
});
t.teardown(() => rig.stop());
const acme = await rig.app.newTeam('Acme');
rig.addDomain(acme.teamId, 'acme-inbox.net');
const postmasterDir = join(rig.app.config.data_dir, 'spool', 'postmaster');

const message = (subject: string) => rfc822({ From: 'ops@remote.example', To: 'postmaster', Subject: subject, 'Message-ID': `<${subject}@remote.example>` }, 'Your server is listed.\n');

/** The postmaster/ file named for `id`, read whole. */
function keptFile(id: string): string {
  const days = readdirSync(postmasterDir);
  const day = days.find((d) => readdirSync(join(postmasterDir, d)).includes(`${id}.eml`));
  if (!day) throw new Error(`no postmaster file for ${id} under ${days.join(', ')}`);
  t.match(day, /^\d{4}-\d{2}-\d{2}$/, 'one folder per UTC day');
  return readFileSync(join(postmasterDir, day, `${id}.eml`), 'utf8');
}

t.test('postmaster@ the appliance host is accepted and kept for the operator, not for a team', async (t) => {
  const sent = await rig.send({ from: 'ops@remote.example', to: ['postmaster@mx.svc-test.net'] }, message('host-1'));
  t.match(sent.response, /^250 2\.0\.0 Ok: queued as [0-9a-f-]{36}$/);
  const kept = keptFile(sent.id);
  t.match(kept, /^Received: from [^]*?by mx\.svc-test\.net \(svc\)/, 'the raw message with svc\'s trace header');
  t.match(kept, /Subject: host-1\r\n/);
  t.match(logLines.find((l) => l.msg === 'inbound message accepted' && l.ids.length === 0 && l.postmaster === 1),
    { level: 30, ip: '127.0.0.1', from: 'ops@remote.example', received: 0, reports: 0, virus: false }, 'each accepted message is one info line');
  t.ok(logLines.some((l) => l.msg === 'inbound session opened' && l.ip === '127.0.0.1'), 'the session\'s start');
  const line = logLines.find((l) => l.msg === 'postmaster mail kept for the operator' && l.id === sent.id);
  t.match(line, { level: 30, rcpt: ['postmaster@mx.svc-test.net'], from: 'ops@remote.example', ip: '127.0.0.1', spoolKey: new RegExp(`^postmaster/\\d{4}-\\d{2}-\\d{2}/${sent.id}\\.eml$`) });
  t.type(line?.size, 'number');
  t.same(await rig.events('email.received'), [], 'no team was given the operator\'s mail');
  const incoming = readdirSync(join(rig.app.config.data_dir, 'spool', 'incoming'));
  t.same(incoming, [], 'the temporary name is gone');
});

t.test('a region\'s own host name and the bare Postmaster (any case) are the operator\'s too', async (t) => {
  const regional = await rig.send({ from: 'ops@remote.example', to: ['PostMaster@mx-eu.svc-test.net'] }, message('region-1'));
  t.match(keptFile(regional.id), /Subject: region-1/);

  const smtp = await rawSmtp(rig.smtpPort);
  t.teardown(() => smtp.close());
  t.match(await smtp.command('EHLO client.example'), /^250/);
  t.match(await smtp.command('MAIL FROM:<ops@remote.example>'), /^250/);
  t.match(await smtp.command('RCPT TO:<Postmaster>'), /^250/, 'RCPT TO:<Postmaster> without a domain');
  t.match(await smtp.command('DATA'), /^354/);
  const reply = await smtp.sendRaw(`${message('bare-1')}\r\n.\r\n`);
  t.match(reply, /^250 2\.0\.0 Ok: queued as [0-9a-f-]{36}$/);
  const id = /queued as (\S+)/.exec(reply)![1]!;
  t.match(keptFile(id), /Subject: bare-1/);
  t.ok(logLines.some((l) => l.msg === 'postmaster mail kept for the operator' && l.id === id && l.rcpt?.[0] === 'Postmaster'), 'logged before the 250');
});

t.test('postmaster@ a receiving domain is that team\'s mail, claimed even when no mailbox claims others', async (t) => {
  const routing = rig.app.appliance.services.receiving.routing;
  const before = routing.mailboxes;
  routing.mailboxes = { claims: async () => false };
  t.teardown(() => { routing.mailboxes = before; });
  const sent = await rig.send({ from: 'ops@remote.example', to: ['POSTMASTER@acme-inbox.net', 'sales@acme-inbox.net'] }, message('domain-1'));
  const got = await rig.api(acme.token, 'GET', `/emails/receiving/${sent.id}`);
  t.equal(got.status, 200);
  t.same(got.body.received_for, ['POSTMASTER@acme-inbox.net'], 'postmaster is the claimed address');
  t.notOk('dropped_reason' in got.body, 'kept, not dropped as no_mailbox');
  t.equal(got.body.subject, 'domain-1');
  const other = await rig.send({ from: 'ops@remote.example', to: ['sales@acme-inbox.net'] }, message('domain-2'));
  t.equal((await rig.api(acme.token, 'GET', `/emails/receiving/${other.id}`)).body.dropped_reason, 'no_mailbox', 'any other address still follows the policy');
});

t.test('postmaster@ a domain svc does not receive for is still relaying', async (t) => {
  const smtp = await rawSmtp(rig.smtpPort);
  t.teardown(() => smtp.close());
  await smtp.command('EHLO client.example');
  await smtp.command('MAIL FROM:<ops@remote.example>');
  t.match(await smtp.command('RCPT TO:<postmaster@elsewhere.example>'), /^550 5\.7\.1 Relay access denied/);
  t.match(logLines.find((l) => l.msg === 'recipient refused' && l.rcpt === 'postmaster@elsewhere.example'),
    { level: 30, ip: '127.0.0.1', reply: '550 5.7.1 Relay access denied' }, 'a refusal is one info line');
  t.match(await smtp.command('RCPT TO:<postmaster@[127.0.0.1]>'), /^550 5\.7\.1 Relay access denied/);
});
