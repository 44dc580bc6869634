import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { promisify } from 'node:util';
import t from 'tap';
import { dkimSign } from 'mailauth';
import { rawSmtp } from '../helpers/raw-smtp.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';

// SMTP smuggling variants never split a message or smuggle a second one into storage; bare LF is
// normalised to CRLF; bare CR is refused. SPF/DKIM/DMARC results are kept with each message.
const rig = await startInboundRig();
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Smuggle');
rig.addDomain(team.teamId, 'guarded-inbox.net');

async function session() {
  const smtp = await rawSmtp(rig.smtpPort);
  await smtp.command('EHLO client.example');
  return smtp;
}

async function subjects(): Promise<string[]> {
  const r = await rig.api(team.token, 'GET', '/emails/receiving?limit=100');
  return r.body.data.map((e: { subject: string }) => e.subject);
}

const variants: Record<string, string> = {
  'LF . LF': '\n.\n',
  'LF . CRLF': '\n.\r\n',
  'CRLF . LF': '\r\n.\n',
  'CR . CR': '\r.\r',
  'CRLF . CR': '\r\n.\r',
  'CR . CRLF': '\r.\r\n',
  'LF .. LF (dot-stuffed)': '\n..\n',
  'CR LF . LF CR': '\r\n.\n\r',
};

for (const [name, sequence] of Object.entries(variants)) {
  t.test(`smuggling variant ${name}: one reply, refused, nothing smuggled`, async (t) => {
    const smtp = await session();
    t.teardown(() => smtp.close());
    t.match(await smtp.command('MAIL FROM:<attacker@far.example>'), /^250 /);
    t.match(await smtp.command('RCPT TO:<desk@guarded-inbox.net>'), /^250 /);
    t.match(await smtp.command('DATA'), /^354 /);
    const payload = `From: attacker@far.example\r\nSubject: carrier ${name}\r\n\r\nfirst part${sequence}`
      + 'MAIL FROM:<ceo@guarded-inbox.net>\r\nRCPT TO:<desk@guarded-inbox.net>\r\nDATA\r\n'
      + `From: ceo@guarded-inbox.net\r\nSubject: smuggled ${name}\r\n\r\nwire the money\r\n.\r\n`;
    const reply = await smtp.sendRaw(payload);
    t.match(reply, /^554 5\.6\.0 /, 'the whole DATA is one message, refused');
    t.match(await smtp.command('NOOP'), /^250 /, 'the next reply belongs to the next command: no extra replies');
    const seen = await subjects();
    t.notOk(seen.some((s) => s.includes(name)), 'neither the carrier nor the smuggled message was stored');
  });
}

t.test('bare LF line endings are normalised to CRLF, not refused', async (t) => {
  const smtp = await session();
  t.teardown(() => smtp.close());
  await smtp.command('MAIL FROM:<lf@far.example>');
  await smtp.command('RCPT TO:<desk@guarded-inbox.net>');
  await smtp.command('DATA');
  const reply = await smtp.sendRaw('From: lf@far.example\nSubject: bare lf\n\nline one\nline two\r\n.\r\n');
  t.match(reply, /^250 2\.0\.0 Ok: queued as /);
  const id = /queued as (\S+)/.exec(reply)![1]!;
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${id}`);
  t.equal(got.body.subject, 'bare lf');
  t.equal(got.body.text, 'line one\nline two\n', 'decoded text keeps its last line break');
  const raw = Buffer.from(await (await fetch(got.body.raw.download_url)).arrayBuffer());
  t.notOk(/[^\r]\n/.test(raw.toString('latin1')), 'every stored line ends in CRLF');
  t.notOk(/\r[^\n]/.test(raw.toString('latin1')), 'no bare CR either');
});

t.test('a bare CR inside a line is refused', async (t) => {
  const smtp = await session();
  t.teardown(() => smtp.close());
  await smtp.command('MAIL FROM:<cr@far.example>');
  await smtp.command('RCPT TO:<desk@guarded-inbox.net>');
  await smtp.command('DATA');
  t.match(await smtp.sendRaw('From: cr@far.example\r\nSubject: bare cr\r\n\r\nab\rcd\r\n.\r\n'), /^554 5\.6\.0 .*bare CR/);
});

t.test('a real lone dot line, sent dot-stuffed with CRLF, is content', async (t) => {
  const smtp = await session();
  t.teardown(() => smtp.close());
  await smtp.command('MAIL FROM:<dot@far.example>');
  await smtp.command('RCPT TO:<desk@guarded-inbox.net>');
  await smtp.command('DATA');
  const reply = await smtp.sendRaw('From: dot@far.example\r\nSubject: lone dot\r\n\r\nabove\r\n..\r\nbelow\r\n.\r\n');
  t.match(reply, /^250 /);
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${/queued as (\S+)/.exec(reply)![1]}`);
  t.equal(got.body.text, 'above\n.\nbelow\n');
});

t.test('SPF, DKIM and DMARC results are kept with the message', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  rig.dns.set('sel._domainkey.signer.example', [{ type: 'TXT', value: [`v=DKIM1; k=rsa; p=${p.slice(0, 200)}`, p.slice(200)] }]);
  rig.dns.set('signer.example', [{ type: 'TXT', value: 'v=spf1 ip4:127.0.0.1 -all' }]);
  rig.dns.set('_dmarc.signer.example', [{ type: 'TXT', value: 'v=DMARC1; p=reject' }]);
  rig.dns.set('forger.example', [{ type: 'TXT', value: 'v=spf1 ip4:192.0.2.1 -all' }]);
  const message = rfc822({ From: 'Signer <news@signer.example>', To: 'desk@guarded-inbox.net', Subject: 'signed', 'Message-ID': '<s1@signer.example>' }, 'authentic\n');
  // mailauth's .d.ts still describes the old single-signature options; the library takes signatureData.
  const signed = await dkimSign(message, { signatureData: [{ signingDomain: 'signer.example', selector: 'sel', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) }] } as never);
  const good = await rig.send({ from: 'bounce@signer.example', to: ['desk@guarded-inbox.net'] }, signed.signatures + message);
  const goodView = (await rig.api(team.token, 'GET', `/emails/receiving/${good.id}`)).body;
  t.match(goodView.authentication, {
    spf: { result: 'pass', domain: 'signer.example' },
    dkim: [{ result: 'pass', domain: 'signer.example', selector: 'sel', aligned: true }],
    dmarc: { result: 'pass', policy: 'reject', domain: 'signer.example' },
    authentication_results: /^mx\.svc-test\.net; dkim=pass .*spf=pass .*dmarc=pass/,
  });

  const tampered = signed.signatures + message.replace('authentic', 'tampered');
  const bad = await rig.send({ from: 'bounce@forger.example', to: ['desk@guarded-inbox.net'] }, tampered);
  const badView = (await rig.api(team.token, 'GET', `/emails/receiving/${bad.id}`)).body;
  t.match(badView.authentication, { spf: { result: 'fail', domain: 'forger.example' }, dkim: [{ result: /^(fail|neutral)$/ }], dmarc: { result: 'fail' } });
  t.notOk(badView.dropped_reason, 'a failed check is recorded, not used to drop mail');
});

const swaks = '/usr/bin/swaks';
t.test("Debian's swaks delivers to the listener", { skip: existsSync(swaks) ? false : 'swaks is not installed' }, async (t) => {
  const { stdout } = await promisify(execFile)(swaks, [
    '--server', '127.0.0.1', '--port', String(rig.smtpPort), '--from', 'swaks@far.example', '--to', 'desk@guarded-inbox.net',
    '--header', 'Subject: from swaks', '--body', 'hello from swaks',
  ], { timeout: 30_000 });
  const accepted = /<[-~]\s+250 2\.0\.0 Ok: queued as (\S+)/.exec(stdout);
  t.ok(accepted, 'swaks saw the 250 after DATA');
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${accepted![1]}`);
  t.match(got.body, { subject: 'from swaks', received_for: ['desk@guarded-inbox.net'] });
  t.match(got.body.text, /hello from swaks/);
});
