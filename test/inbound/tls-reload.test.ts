import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import t from 'tap';
import type { InboundRole } from '../../bin/roles/inbound.js';
import { withDeadline } from '../helpers/deadline.js';
import { startInboundRig } from '../helpers/inbound-rig.js';

// A renewed certificate (certbot's deploy hook runs `systemctl reload svc-inbound`, which sends
// SIGHUP) is served to new STARTTLS connections without a restart; files that are not a usable
// pair are refused with one error line and the old certificate is still served.
t.setTimeout(60_000);
const dir = mkdtempSync(join(tmpdir(), 'svc-tls-reload-'));
const certFile = join(dir, 'cert.pem');
const keyFile = join(dir, 'key.pem');

/** A self-signed pair for `name`, made by openssl (the X.509 work is never ours). */
function makePair(name: string): { cert: string; key: string } {
  const out = join(dir, name);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`,
    '-keyout', `${out}.key`, '-out', `${out}.crt`], { stdio: 'ignore' });
  return { cert: readFileSync(`${out}.crt`, 'utf8'), key: readFileSync(`${out}.key`, 'utf8') };
}
const install = (pair: { cert: string; key: string }) => { writeFileSync(certFile, pair.cert); writeFileSync(keyFile, pair.key); };

const first = makePair('first.svc-test.net');
const second = makePair('second.svc-test.net');
install(first);
const logLines: Record<string, any>[] = [];
const rig = await startInboundRig({
  env: { SVC_SMTP_TLS_CERT_FILE: certFile, SVC_SMTP_TLS_KEY_FILE: keyFile, SVC_SUBMISSION_PORT: '0', SVC_SUBMISSIONS_PORT: '0', SVC_LOG_LEVEL: 'info' },
  logDestination: { write: (line) => { logLines.push(JSON.parse(line) as Record<string, any>); } },
});
t.teardown(() => rig.stop());
const inbound = rig.app.appliance.running.find((r) => r.name === 'inbound') as InboundRole;

/** The subject CN of the certificate a new STARTTLS session is shown. */
async function servedName(): Promise<string> {
  const socket = connect(rig.smtpPort, '127.0.0.1');
  let seen = '';
  const untilReply = (pattern: RegExp) => withDeadline(`SMTP reply ${pattern}`, new Promise<void>((resolve) => {
    const check = () => { if (pattern.test(seen)) { socket.off('data', onData); resolve(); } };
    const onData = (chunk: Buffer) => { seen += chunk.toString(); check(); };
    socket.on('data', onData);
    check();
  }), 10_000);
  await untilReply(/^220 /m);
  socket.write('EHLO client.example\r\n');
  await untilReply(/^250 /m);
  seen = '';
  socket.write('STARTTLS\r\n');
  await untilReply(/^220 /m);
  const secure = tlsConnect({ socket, rejectUnauthorized: false, servername: 'mx.svc-test.net' });
  await withDeadline('the TLS handshake', new Promise<void>((resolve, reject) => { secure.once('secureConnect', resolve); secure.once('error', reject); }), 10_000);
  const cert = secure.getPeerX509Certificate();
  secure.destroy();
  return new X509Certificate(cert!.raw).subject.replace(/^CN=/, '');
}

t.test('a reload serves the renewed certificate to new sessions', async (t) => {
  t.equal(await servedName(), 'first.svc-test.net');
  install(second);
  t.equal(await servedName(), 'first.svc-test.net', 'files changed, nothing reloaded yet');
  await rig.app.appliance.reload();
  t.equal(await servedName(), 'second.svc-test.net');
  t.match(logLines.find((l) => l.msg === 'TLS certificate reloaded'), { level: 30, certFile, subject: 'CN=second.svc-test.net' });
});

t.test('a key that does not match is refused and the old certificate stays', async (t) => {
  install({ cert: first.cert, key: second.key });
  await inbound.reload();
  t.equal(await servedName(), 'second.svc-test.net');
  t.match(logLines.find((l) => l.msg === 'TLS reload refused: the old certificate is still served'), { level: 50, certFile });
});
