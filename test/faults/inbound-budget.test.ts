import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t, { type Test } from 'tap';
import type { InboundRole } from '../../bin/roles/inbound.js';
import { hostileClient, type HostileClient } from '../helpers/hostile-client.js';
import { startHostileRig } from '../helpers/hostile-rig.js';

// Bounded memory under load on the inbound listener (issue #7): the in-flight budget across
// sessions (mta/inbound/budget.ts) and the minimum DATA rate (mta/inbound/data-rate.ts), against
// the real listener with a small budget and a short grace period.
const MiB = 1024 * 1024;
const BUDGET = 10 * MiB;
const GRACE_S = 5;
const rig = await startHostileRig({
  SVC_SMTP_INFLIGHT_BYTES_LIMIT: String(BUDGET),
  SVC_SMTP_MAX_MESSAGE_BYTES: String(4 * MiB),
  SVC_SMTP_SOCKET_TIMEOUT_S: String(GRACE_S),
  SVC_SMTP_MIN_DATA_RATE_BYTES_PER_S: '500',
});
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Inbound budget');
rig.addDomain(team.teamId, 'budget-inbox.net');
const inbound = rig.app.appliance.running.find((r) => r.name === 'inbound') as InboundRole;

// The appliance runs in this process, so its memory is this process's memory.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
// Message bytes live in Buffers, outside the JS heap: arrayBuffers is where they show.
const buffers = () => process.memoryUsage().arrayBuffers;
/** Buffers still referenced: collected a few times over, since freed memory goes back in later tasks. */
async function liveBuffers(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(30);
  }
  return buffers();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const queuedId = (reply: string) => /queued as (\S+)/.exec(reply)?.[1] ?? '';
const headers = (subject: string) => Buffer.from(`From: x@far.example\r\nTo: desk@budget-inbox.net\r\nSubject: ${subject}\r\n\r\n`);
/** `bytes` of 78-octet lines (76 + CRLF), none starting with a dot. */
const body = (bytes: number) => Buffer.from(`${'b'.repeat(76)}\r\n`.repeat(Math.ceil(bytes / 78)));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function transaction(t: Test, mailArgs = ''): Promise<HostileClient> {
  const c = await hostileClient(rig.smtpPort);
  t.teardown(() => c.close());
  t.match(await c.command('EHLO client.example'), /^250[ -]/);
  t.match(await c.command(`MAIL FROM:<x@far.example>${mailArgs}`), /^250 /);
  t.match(await c.command('RCPT TO:<desk@budget-inbox.net>'), /^250 /);
  return c;
}

/** The stored raw source ends with exactly the message that was sent (after the Received line). */
async function storedIntact(t: Test, reply: string, message: Buffer, label: string) {
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${queuedId(reply)}`);
  const raw = Buffer.from(await (await fetch(got.body.raw.download_url)).arrayBuffer());
  t.equal(sha(raw.subarray(raw.length - message.length)), sha(message), `${label}: stored intact`);
  t.ok(raw.subarray(0, raw.length - message.length).toString('latin1').startsWith('Received: '), `${label}: only the Received line was added`);
}

async function acceptedNow(t: Test, subject: string) {
  const c = await transaction(t);
  t.match(await c.command('DATA'), /^354 /);
  t.match(await c.sendRawReply(Buffer.concat([headers(subject), Buffer.from('after the load\r\n.\r\n')])), /^250 /, `${subject}: accepted`);
  await c.command('QUIT');
}

t.test('a declared SIZE that does not fit is answered 452 4.3.1 at DATA; once the others finish it fits', async (t) => {
  const size = Math.round(3.5 * MiB);
  const text = body(size - 200);
  const [a, b, c] = [await transaction(t, ` SIZE=${size}`), await transaction(t, ` SIZE=${size}`), await transaction(t, ` SIZE=${size}`)];
  t.match(await a.command('DATA'), /^354 /, 'first: 3.5 MiB of 10 held');
  t.match(await b.command('DATA'), /^354 /, 'second: 7 MiB of 10 held');
  t.match(await c.command('DATA'), /^452 4\.3\.1 /, 'third: 10.5 MiB would pass the budget, answered 452 before any data');
  t.ok(inbound.smtp.inflightBytes() >= 2 * size, 'the two declared sizes are held');
  const replies = [];
  for (const [i, client] of [a, b].entries()) {
    const message = Buffer.concat([headers(`declared ${i}`), text]);
    client.write(message);
    replies.push(client.sendRawReply('.\r\n').then((reply) => ({ reply, message })));
  }
  for (const [i, { reply, message }] of (await Promise.all(replies)).entries()) {
    t.match(reply, /^250 /, `declared ${i}: accepted`);
    await storedIntact(t, reply, message, `declared ${i}`);
  }
  t.equal(inbound.smtp.inflightBytes(), 0, 'committed messages give their bytes back');
  t.match(await c.command('DATA'), /^354 /, 'the refused session tries DATA again in the same transaction: it fits now');
  const message = Buffer.concat([headers('declared retry'), text]);
  c.write(message);
  const reply = await c.sendRawReply('.\r\n');
  t.match(reply, /^250 /, 'and is accepted');
  await storedIntact(t, reply, message, 'declared retry');
  t.equal(inbound.smtp.inflightBytes(), 0);

  // A client that declares a size, gets its 354 and hangs up: the hold goes with the session.
  const gone = await transaction(t, ` SIZE=${size}`);
  t.match(await gone.command('DATA'), /^354 /);
  t.ok(inbound.smtp.inflightBytes() >= size, 'its declared size is held');
  gone.write(headers('hung up'));
  gone.close();
  t.equal(await settled(() => inbound.smtp.inflightBytes(), true), 0, 'and given back once it hung up');
});

t.test('concurrent undeclared messages past the budget: memory held stays within it, some 452 at the end, none 5xx, the rest intact', async (t) => {
  const SESSIONS = 16;
  const SIZE = 3 * MiB;
  const text = body(SIZE); // one buffer shared by every client: the test's own memory stays small
  const clients = [];
  for (let i = 0; i < SESSIONS; i++) {
    const c = await transaction(t);
    t.match(await c.command('DATA'), /^354 /, 'no SIZE declared: DATA goes ahead');
    clients.push(c);
  }
  const baseline = await liveBuffers();
  // Every whole message but its terminator: 48 MiB would be held at once without the budget.
  for (const [i, c] of clients.entries()) {
    c.write(headers(`undeclared ${i}`));
    c.write(text);
  }
  const filled = await settled(() => inbound.smtp.inflightBytes());
  t.ok(filled >= BUDGET - SIZE && filled <= BUDGET, `the budget filled up and no further (${(filled / MiB).toFixed(1)} of ${BUDGET / MiB} MiB held)`);
  const retained = (await liveBuffers()) - baseline;
  // Measured after a collection, so drained bytes waiting to be collected do not count: what the
  // listener keeps, plus what sits in stream buffers. With the budget this measured 9-10 MiB;
  // without it, the whole 48 MiB (48.6 MiB).
  t.ok(retained < BUDGET + 6 * MiB, `${(retained / MiB).toFixed(1)} MiB of buffers held with all ${SESSIONS} messages in DATA, under the ${BUDGET / MiB} MiB budget + 6 MiB`);
  let peak = buffers();
  const sampler = setInterval(() => { peak = Math.max(peak, buffers()); }, 10);
  t.teardown(() => clearInterval(sampler));
  const replies = await Promise.all(clients.map((c) => c.sendRawReply('.\r\n')));
  clearInterval(sampler);
  // The peak counts drained bytes not yet collected (up to the 48 MiB sent) and the copies made
  // while the accepted ones are checked and stored: measured ~37 MiB with the budget, ~118 MiB
  // without it.
  const peakGrowth = peak - baseline;
  t.ok(peakGrowth < 8 * BUDGET, `peak buffers while answering ${(peakGrowth / MiB).toFixed(1)} MiB over the baseline, under 8 x the budget`);
  const accepted = replies.filter((r) => r.startsWith('250 '));
  const deferred = replies.filter((r) => /^452 4\.3\.1 /.test(r));
  t.equal(replies.filter((r) => /^5/.test(r)).length, 0, `no 5xx (replies: ${replies.map((r) => r.slice(0, 9)).join(', ')})`);
  t.equal(accepted.length + deferred.length, SESSIONS, 'every session got 250 or 452');
  t.ok(deferred.length >= SESSIONS - Math.floor(BUDGET / SIZE), `${deferred.length} deferred with 452 4.3.1 at the end of data`);
  t.ok(accepted.length >= 1, `${accepted.length} accepted`);
  t.equal(inbound.smtp.inflightBytes(), 0, 'every byte given back once the sessions were answered');
  for (const [i, c] of clients.entries()) {
    t.match(await c.command('NOOP'), /^250 /, `session ${i} is still in step after its reply`);
  }
  for (const [i, reply] of replies.entries()) {
    if (reply.startsWith('250 ')) await storedIntact(t, reply, Buffer.concat([headers(`undeclared ${i}`), text]), `undeclared ${i}`);
  }
  await acceptedNow(t, 'after the burst');
});

/** The value once it has stopped changing for 300 ms (at most 15 s); `zero`: once it is 0. */
async function settled(read: () => number, zero = false): Promise<number> {
  const deadline = Date.now() + 15_000;
  let last = -1;
  let since = Date.now();
  while (Date.now() < deadline) {
    const now = read();
    if (now !== last) [last, since] = [now, Date.now()];
    else if ((zero ? now === 0 : now > 0) && Date.now() - since >= 300) break;
    await sleep(20);
  }
  return last;
}

t.test('a client trickling DATA is cut off with 421 4.4.2 and nothing is kept; one at normal speed is not', async (t) => {
  const rowsBefore = await rig.receivedRows();
  const spoolBefore = rig.spoolFiles();
  const slow = await transaction(t);
  const normal = await transaction(t);
  t.match(await slow.command('DATA'), /^354 /);
  t.match(await normal.command('DATA'), /^354 /);
  const started = Date.now();
  slow.write(headers('trickled'));
  // 4 octets a second: each resets the idle timeout, so only the rate can end this.
  const trickle = setInterval(() => { if (!slow.closed) slow.write('x'); }, 250);
  t.teardown(() => clearInterval(trickle));
  // The normal client sends 16 KiB a second for longer than the grace period (well above 500 B/s).
  const normalMessage = Buffer.concat([headers('normal speed'), body(Math.round((GRACE_S + 2) * 16 * 1024))]);
  const sent = (async () => {
    for (let at = 0; at < normalMessage.length; at += 16 * 1024) {
      normal.write(normalMessage.subarray(at, at + 16 * 1024));
      await sleep(1000);
    }
    return normal.sendRawReply('.\r\n');
  })();
  const cut = await slow.reply(30_000);
  const seconds = (Date.now() - started) / 1000;
  clearInterval(trickle);
  t.match(cut, /^421 4\.4\.2 /, 'the trickling client hears 421 4.4.2');
  t.ok(seconds >= GRACE_S - 0.5 && seconds < GRACE_S + 5, `after ${seconds.toFixed(1)} s: past the ${GRACE_S} s grace period, within a few seconds of it`);
  t.equal(await slow.reply(5000), 'closed', 'and the connection is closed');
  const reply = await sent;
  t.match(reply, /^250 /, 'the client at normal speed is accepted');
  await storedIntact(t, reply, normalMessage, 'normal speed');
  await sleep(200);
  t.equal(await rig.receivedRows(), rowsBefore + 1, 'only the normal message was stored');
  t.equal(rig.spoolFiles(), spoolBefore + 1, 'no spool file is left from the trickled message');
  t.equal(inbound.smtp.inflightBytes(), 0, 'nothing held once both are done');
});
