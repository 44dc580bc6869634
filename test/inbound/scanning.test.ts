import t from 'tap';
import { receivedRepo } from '../../storage/repos/index.js';
import { EICAR, EICAR_SIGNATURE, startTestClamd } from '../helpers/clamd.js';
import { call } from '../helpers/http.js';
import { rawSmtp } from '../helpers/raw-smtp.js';
import { rfc822, startInboundRig, type InboundRig } from '../helpers/inbound-rig.js';

// Virus scanning with a real clamd (Debian's clamav-daemon, a one-signature database): EICAR is
// dropped as `virus`; a clamd that is down or frozen past svc's deadline makes DATA answer 451 when
// failing closed, and stores the message marked unscanned when failing open.
const clamd = await startTestClamd();
t.teardown(() => clamd.stop());

const withAttachment = (name: string, content: string) => rfc822({
  From: 'Mallory <m@far.example>', To: 'desk@scan-inbox.net', Subject: `file ${name}`, 'MIME-Version': '1.0',
  'Content-Type': 'multipart/mixed; boundary=z',
}, ['--z', 'Content-Type: text/plain', '', 'see attached', '--z', `Content-Type: application/octet-stream; name=${name}`,
  `Content-Disposition: attachment; filename=${name}`, 'Content-Transfer-Encoding: base64', '',
  Buffer.from(content).toString('base64'), '--z--', ''].join('\n'));

async function rigWith(env: Record<string, string>): Promise<{ rig: InboundRig; token: string; teamId: string }> {
  const rig = await startInboundRig({
    env: { SVC_SCANNER_CLAMD: clamd.socket, SVC_SCANNER_TIMEOUT_MS: '1500', SVC_SCANNER_MAX_BYTES: '65536', ...env },
  });
  const team = await rig.app.newTeam('Scan');
  rig.addDomain(team.teamId, 'scan-inbox.net');
  return { rig, token: team.token, teamId: team.teamId };
}

/** The SMTP reply code nodemailer's client was refused with (it throws on anything but 250). */
const refusal = (sending: Promise<unknown>): Promise<number | undefined> =>
  sending.then(() => undefined, (err: { responseCode?: number }) => err.responseCode);

const rowOf = (rig: InboundRig, teamId: string, id: string) => receivedRepo(rig.app.appliance.services.database.db).byId(teamId, id);

t.test('fail-closed (the default)', async (t) => {
  const { rig, token, teamId } = await rigWith({});
  t.teardown(() => rig.stop());

  await t.test('an EICAR attachment is dropped as virus by a real clamd', async (t) => {
    const sent = await rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, withAttachment('eicar.com', EICAR));
    t.match(sent.response, /^250 /);
    const got = await rig.api(token, 'GET', `/emails/receiving/${sent.id}`);
    t.match(got.body, { dropped_reason: 'virus', html: null, text: null, attachments: [], raw: null, subject: 'file eicar.com' });
    const row = await rowOf(rig, teamId, sent.id);
    t.equal(row?.scan_status, 'infected');
    t.equal(row?.scan_signature, `${EICAR_SIGNATURE}.UNOFFICIAL`);
    t.notOk((await rig.events('email.received')).some((e) => e.data.email_id === sent.id), 'no email.received for a virus');
  });

  await t.test('a clean message is kept and marked clean', async (t) => {
    const sent = await rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, withAttachment('notes.txt', 'nothing to see'));
    const got = await rig.api(token, 'GET', `/emails/receiving/${sent.id}`);
    t.notOk(got.body.dropped_reason);
    t.equal(got.body.attachments.length, 1);
    t.equal((await rowOf(rig, teamId, sent.id))?.scan_status, 'clean');
  });

  await t.test('clamd frozen past the deadline: 451, nothing stored', async (t) => {
    const before = (await rig.api(token, 'GET', '/emails/receiving?limit=100')).body.data.length;
    clamd.freeze();
    t.teardown(() => clamd.thaw());
    t.equal(await refusal(rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, withAttachment('late.txt', 'x'))), 451);
    clamd.thaw();
    t.equal((await rig.api(token, 'GET', '/emails/receiving?limit=100')).body.data.length, before, 'nothing was stored');
    const again = await rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, withAttachment('late.txt', 'x'));
    t.match(again.response, /^250 /, 'the retry after clamd recovers is accepted');
  });

  await t.test('a message larger than scanner_max_bytes is refused 552 when failing closed', async (t) => {
    const big = withAttachment('big.bin', 'y'.repeat(70_000));
    t.equal(await refusal(rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, big)), 552);
  });

  await t.test('readiness reports clamd', async (t) => {
    const ready = await call(rig.app.baseUrl, 'GET', '/ready');
    t.match(ready.body.checks.find((c: { name: string }) => c.name === 'clamd'), { ok: true });
  });
});

t.test('fail-open: a frozen clamd stores the message marked unscanned', async (t) => {
  const { rig, token, teamId } = await rigWith({ SVC_SCANNER_FAIL_MODE: 'open' });
  t.teardown(() => rig.stop());
  clamd.freeze();
  t.teardown(() => clamd.thaw());
  const sent = await rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, withAttachment('late.txt', 'x'));
  clamd.thaw();
  t.match(sent.response, /^250 /);
  const got = await rig.api(token, 'GET', `/emails/receiving/${sent.id}`);
  t.notOk(got.body.dropped_reason);
  t.equal((await rowOf(rig, teamId, sent.id))?.scan_status, 'unscanned', 'never stored as clean');
  const big = await rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, withAttachment('big.bin', 'y'.repeat(70_000)));
  t.equal((await rowOf(rig, teamId, big.id))?.scan_status, 'unscanned', 'too big to scan: unscanned');
  const eicar = await rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, withAttachment('eicar.com', EICAR));
  t.equal((await rig.api(token, 'GET', `/emails/receiving/${eicar.id}`)).body.dropped_reason, 'virus', 'a verdict still drops a virus');
});

t.test('clamd down: 451 at end of data (fail-closed)', async (t) => {
  const { rig } = await rigWith({ SVC_SCANNER_CLAMD: '/nonexistent/clamd.sock' });
  t.teardown(() => rig.stop());
  const smtp = await rawSmtp(rig.smtpPort);
  t.teardown(() => smtp.close());
  await smtp.command('EHLO client.example');
  await smtp.command('MAIL FROM:<m@far.example>');
  t.match(await smtp.command('RCPT TO:<desk@scan-inbox.net>'), /^250 /);
  t.match(await smtp.command('DATA'), /^354 /);
  t.match(await smtp.sendRaw('Subject: hi\r\nFrom: m@far.example\r\n\r\nhello\r\n.\r\n'), /^451 4\.7\.1 /);
  const ready = await call(rig.app.baseUrl, 'GET', '/ready');
  t.equal(ready.status, 503);
  t.match(ready.body.failed, ['clamd']);
});
