import t from 'tap';
import { EICAR, startTestClamd } from '../helpers/clamd.js';
import { waitFor } from '../helpers/deadline.js';
import { rawSmtp } from '../helpers/raw-smtp.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';
import { scrapeSocket, valueOf } from '../helpers/scrape.js';

// The inbound side of /metrics with a real clamd: scan verdicts and their time, open SMTP sessions
// and the bytes in flight, each under the process's role.
t.setTimeout(90_000);
const clamd = await startTestClamd();
t.teardown(() => clamd.stop());
const rig = await startInboundRig({ env: { SVC_SCANNER_CLAMD: clamd.socket, SVC_SCANNER_TIMEOUT_MS: '5000' } });
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Scan');
rig.addDomain(team.teamId, 'scan-inbox.net');
const role = 'api+inbound';
const scrape = async () => (await scrapeSocket(rig.app.adminSocket)).text;

const withAttachment = (name: string, content: string) => rfc822({
  From: 'm@far.example', To: 'desk@scan-inbox.net', Subject: name, 'MIME-Version': '1.0', 'Content-Type': 'multipart/mixed; boundary=z',
}, ['--z', 'Content-Type: text/plain', '', 'see attached', '--z', `Content-Type: application/octet-stream; name=${name}`,
  `Content-Disposition: attachment; filename=${name}`, 'Content-Transfer-Encoding: base64', '', Buffer.from(content).toString('base64'), '--z--', ''].join('\n'));

t.test('clamd verdicts and scan time are counted', async (t) => {
  const before = await scrape();
  t.equal(valueOf(before, 'svc_scan_verdicts_total', { role, verdict: 'clean' }), undefined, 'nothing scanned yet');
  await rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, withAttachment('notes.txt', 'nothing to see'));
  await rig.send({ from: 'm@far.example', to: ['desk@scan-inbox.net'] }, withAttachment('eicar.com', EICAR));
  const after = await scrape();
  t.equal(valueOf(after, 'svc_scan_verdicts_total', { role, verdict: 'clean' }), 1);
  t.equal(valueOf(after, 'svc_scan_verdicts_total', { role, verdict: 'virus' }), 1);
  t.equal(valueOf(after, 'svc_scan_duration_seconds_count', { role }), 2);
  t.ok(valueOf(after, 'svc_scan_duration_seconds_sum', { role })! > 0);
});

t.test('open sessions and bytes in flight are read from the listener at scrape time', async (t) => {
  t.equal(valueOf(await scrape(), 'svc_inbound_inflight_bytes', { role }), 0);
  const open = await Promise.all([rawSmtp(rig.smtpPort), rawSmtp(rig.smtpPort)]);
  t.teardown(() => open.forEach((s) => s.close()));
  t.equal(valueOf(await scrape(), 'svc_inbound_sessions', { role }), 2, 'two sessions open');
  const [smtp] = open;
  await smtp!.command('EHLO client.example');
  await smtp!.command('MAIL FROM:<m@far.example>');
  await smtp!.command('RCPT TO:<desk@scan-inbox.net>');
  await smtp!.command('DATA');
  smtp!.sendRaw(`Subject: half\r\n\r\n${'x'.repeat(5000)}\r\n`).catch(() => undefined);
  await waitFor('the message in DATA to be held', async () => (valueOf(await scrape(), 'svc_inbound_inflight_bytes', { role }) ?? 0) > 5000);
  for (const s of open) s.close();
  await waitFor('the sessions to close', async () => valueOf(await scrape(), 'svc_inbound_sessions', { role }) === 0);
});
