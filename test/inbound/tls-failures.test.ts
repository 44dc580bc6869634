import t, { type Test } from 'tap';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { takeReplies } from '../helpers/raw-smtp.js';
import { startInboundRig } from '../helpers/inbound-rig.js';

// A client offering only TLS 1.0/1.1 after STARTTLS fails the handshake (Node's floor is 1.2).
// That is the client's doing: one info line naming the client and the reason, never error lines.
const logLines: Record<string, unknown>[] = [];
const rig = await startInboundRig({
  env: { SVC_LOG_LEVEL: 'info' },
  logDestination: { write: (line) => { logLines.push(JSON.parse(line) as Record<string, unknown>); } },
});
t.teardown(() => rig.stop());

/** Reads whole SMTP replies off a plain socket, each within 10 s. */
function replyReader(socket: Socket): () => Promise<string> {
  let buffer = '';
  const ready: string[] = [];
  const waiting: ((reply: string) => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    const taken = takeReplies(buffer + chunk.toString('latin1'));
    buffer = taken.rest;
    for (const reply of taken.replies) (waiting.shift() ?? ((r: string) => ready.push(r)))(reply);
  });
  return () => new Promise((resolve, reject) => {
    const queued = ready.shift();
    if (queued !== undefined) return resolve(queued);
    const timer = setTimeout(() => reject(new Error(`no SMTP reply; buffer ${JSON.stringify(buffer)}`)), 10_000);
    waiting.push((r) => { clearTimeout(timer); resolve(r); });
  });
}

/** EHLO, STARTTLS, then a handshake allowing at most `maxVersion`: 'secure' or the client's error code. */
async function startTlsWith(t: Test, maxVersion: 'TLSv1.1' | 'TLSv1.3'): Promise<string> {
  const socket = connect(rig.smtpPort, '127.0.0.1');
  const reply = replyReader(socket);
  try {
    t.match(await reply(), /^220 /);
    socket.write('EHLO old-client.example\r\n');
    t.match(await reply(), /STARTTLS/);
    socket.write('STARTTLS\r\n');
    t.match(await reply(), /^220 /);
    socket.removeAllListeners('data');
    // SECLEVEL=0: OpenSSL 3 refuses to offer TLS 1.0/1.1 at all otherwise.
    const secure = tlsConnect({ socket, maxVersion, minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0', rejectUnauthorized: false });
    return await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('no outcome within 10 s'), 10_000);
      secure.once('secureConnect', () => { clearTimeout(timer); secure.end(); resolve('secure'); });
      secure.once('error', (err: NodeJS.ErrnoException) => { clearTimeout(timer); resolve(err.code ?? err.message); });
    });
  } finally {
    socket.destroy();
  }
}

/** The lines logged from now until `settleMs` after `action` ends. */
async function linesDuring(action: () => Promise<unknown>, settleMs = 500): Promise<Record<string, unknown>[]> {
  const from = logLines.length;
  await action();
  await sleep(settleMs); // smtp-server reports the failure after the client has seen the alert
  return logLines.slice(from);
}

t.test('a TLS 1.1-only client: one info line with its address and the reason, no error line', async (t) => {
  let outcome = '';
  const lines = await linesDuring(async () => { outcome = await startTlsWith(t, 'TLSv1.1'); });
  t.equal(outcome, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION', 'the handshake fails: protocol version alert');
  t.same(lines.filter((l) => (l.level as number) >= 40).map((l) => l.msg), [], 'no warn or error line');
  const failures = lines.filter((l) => l.msg === 'inbound TLS handshake failed');
  t.equal(failures.length, 1, 'exactly one line for the failure');
  t.match(failures[0], { level: 30, ip: '127.0.0.1', reason: 'unsupported protocol', code: 'ERR_SSL_UNSUPPORTED_PROTOCOL', offered: 'TLSv1.1' });
});

t.test('each failing client gets its own line; a modern client still gets TLS', async (t) => {
  const lines = await linesDuring(async () => {
    t.equal(await startTlsWith(t, 'TLSv1.1'), 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    t.equal(await startTlsWith(t, 'TLSv1.1'), 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    t.equal(await startTlsWith(t, 'TLSv1.3'), 'secure', 'TLS 1.3 is negotiated');
  });
  t.equal(lines.filter((l) => l.msg === 'inbound TLS handshake failed').length, 2, 'two failures, two lines');
  t.same(lines.filter((l) => (l.level as number) >= 50), [], 'no error line');
});
