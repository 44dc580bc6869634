import nodemailer from 'nodemailer';
import t from 'tap';
import type { InboundRole } from '../../bin/roles/inbound.js';
import { publish, startDomainsRig, type WireRecord } from '../helpers/domain-fixtures.js';
import { rawSmtp } from '../helpers/raw-smtp.js';

// The whole path with nothing faked: a domain added with receiving on through the domains API, its
// records published in the loopback DNS and verified, then mail sent to it over SMTP shows up in
// the receiving API; until the domain verifies, its addresses are relaying (550).
const rig = await startDomainsRig({ SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: '0' }, ['api', 'inbound']);
t.teardown(() => rig.stop());
const port = (rig.app.appliance.running.find((r) => r.name === 'inbound') as InboundRole).smtp.port;
const team = await rig.app.newTeam('Inbox');

t.test('a domain with receiving enabled through the API receives mail once it verifies', async (t) => {
  const created = await rig.api(team.token, 'POST', '/domains', { name: 'real-inbox.net', capabilities: { receiving: 'enabled' } });
  t.equal(created.status, 201, 'the domain is added with receiving on');

  const early = await rawSmtp(port);
  await early.command('EHLO client.example');
  await early.command('MAIL FROM:<x@far.example>');
  t.match(await early.command('RCPT TO:<hello@real-inbox.net>'), /^450 4\.7\.1 real-inbox\.net is not verified on this server yet/,
    'not before the team holds the name: a temporary refusal saying why, so the sender retries');
  early.close();

  for (const r of created.body.records as WireRecord[]) publish(rig.dns, 'real-inbox.net', r);
  rig.clock.advance(16_000);
  const verified = await rig.api(team.token, 'POST', `/domains/${created.body.id}/verify`);
  t.equal(verified.body.status, 'verified', 'every record verifies');

  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, tls: { rejectUnauthorized: false } });
  t.teardown(() => transport.close());
  const info = await transport.sendMail({ from: 'Far Sender <x@far.example>', to: 'hello@real-inbox.net', subject: 'Real domain', text: 'It works.' });
  const id = /queued as (\S+)/.exec(info.response)![1]!;
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${id}`);
  t.match(got.body, { id, subject: 'Real domain', from: 'Far Sender <x@far.example>', received_for: ['hello@real-inbox.net'] });
  t.equal(got.body.text, 'It works.\n');
});
