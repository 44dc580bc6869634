import t, { type Test } from 'tap';
import { waitFor } from '../helpers/deadline.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { hostileClient, type HostileClient } from '../helpers/hostile-client.js';
import { startHostileRig } from '../helpers/hostile-rig.js';

// Hostile SMTP against the real inbound listener (issue #7, "Hostile input"). The smuggling
// end-of-data variants are in test/inbound/smuggling.test.ts and the basic limits in
// test/inbound/limits.test.ts; this file adds what a hostile client does beyond them, and checks
// after each that nothing went anywhere: no outbound rows, nothing at the fake MX (smarthost and
// MX of every domain a trick aims at), nothing stored that should not be.
const rig = await startHostileRig({ SVC_SMTP_MAX_RECIPIENTS: '5', SVC_SMTP_MAX_MESSAGE_BYTES: String(1024 * 1024) });
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Hostile SMTP');
rig.addDomain(team.teamId, 'hostile-inbox.net');

const open = async (t: Test): Promise<HostileClient> => {
  const c = await hostileClient(rig.smtpPort);
  t.teardown(() => c.close());
  t.match(c.greeting, /^220 /);
  return c;
};
const session = async (t: Test): Promise<HostileClient> => {
  const c = await open(t);
  t.match(await c.command('EHLO client.example'), /^250[ -]/);
  return c;
};
const mb = (n: number) => Math.round(n / 1024 / 1024);
const queuedId = (reply: string) => /queued as (\S+)/.exec(reply)?.[1] ?? '';
const subjects = async (): Promise<string[]> =>
  (await rig.api(team.token, 'GET', '/emails/receiving?limit=100')).body.data.map((e: { subject: string }) => e.subject);
const message = (subject: string, body = 'hello') => `From: x@far.example\r\nTo: desk@hostile-inbox.net\r\nSubject: ${subject}\r\n\r\n${body}\r\n.\r\n`;

/** Nothing left the appliance and nothing was queued to leave it. */
async function nothingDeliveredAnywhere(t: Test) {
  await new Promise((r) => setTimeout(r, 300)); // an outbound queue that had something would have connected by now
  t.same(await rig.outboundRows(), { emails: 0, recipients: 0 }, 'no outbound email or recipient rows');
  t.equal(rig.mx.received.length, 0, 'the fake MX received nothing');
  t.equal(rig.mx.connections, 0, 'nothing even connected to the fake MX');
}

t.test('bare LF ends a command line; a bare CR inside a command never splits it into two', async (t) => {
  const c = await open(t);
  c.write('EHLO client.example\n');
  t.match(await c.reply(), /^250[ -]/, 'EHLO ended by a bare LF');
  c.write('NOOP\n');
  t.match(await c.reply(), /^250 /, 'NOOP ended by a bare LF is one command');
  // A hidden second command behind a bare CR: smtp-server would read the CR as a space and take
  // the rest as parameters; svc refuses the line (mta/inbound/command-guard.ts).
  c.write('MAIL FROM:<a@far.example>\rRCPT TO:<victim@other-victim.net>\r\n');
  t.match(await c.reply(), /^501 5\.5\.2 /, 'MAIL with a bare CR inside is refused');
  t.match(await c.command('MAIL FROM:<a@far.example>'), /^250 /, 'the session goes on, no transaction was open');
  c.write('RCPT TO:<desk@hostile-inbox.net>\rRCPT TO:<victim@other-victim.net>\r\n');
  t.match(await c.reply(), /^501 5\.5\.2 /, 'RCPT with a bare CR inside is refused');
  c.write('NOOP\0RCPT TO:<victim@other-victim.net>\r\n');
  t.match(await c.reply(), /^501 5\.5\.2 /, 'a NUL inside a command too');
  t.match(await c.command('NOOP'), /^250 /, 'the next reply belongs to the next command: nothing was split off');
  t.match(await c.command('DATA'), /^503 /, 'no recipient was taken from any of those lines');
  await c.command('QUIT');
  await nothingDeliveredAnywhere(t);
});

t.test('bare CR in DATA across TCP segments: a CR ending one write and LF starting the next is CRLF', async (t) => {
  const c = await session(t);
  await c.command('MAIL FROM:<x@far.example>');
  await c.command('RCPT TO:<desk@hostile-inbox.net>');
  t.match(await c.command('DATA'), /^354 /);
  c.write('From: x@far.example\r\nSubject: split crlf\r');
  await new Promise((r) => setTimeout(r, 50));
  c.write('\n\r\nline one\r');
  await new Promise((r) => setTimeout(r, 50));
  c.write('\nline two\r\n.\r\n');
  const accepted = await c.reply();
  t.match(accepted, /^250 /, 'CRLF split across segments is an ordinary line end');

  await c.command('MAIL FROM:<x@far.example>');
  await c.command('RCPT TO:<desk@hostile-inbox.net>');
  await c.command('DATA');
  c.write('From: x@far.example\r\nSubject: split bare cr\r\n\r\nab\r');
  await new Promise((r) => setTimeout(r, 50));
  c.write('cd\r\n.\r\n');
  t.match(await c.reply(), /^554 5\.6\.0 .*bare CR/, 'a CR ending a segment and followed by text is a bare CR: refused');

  await c.command('MAIL FROM:<x@far.example>');
  await c.command('RCPT TO:<desk@hostile-inbox.net>');
  await c.command('DATA');
  t.match(await c.sendRawReply('From: x@far.example\r\nSubject: header cr\rBcc: victim@other-victim.net\r\n\r\nbody\r\n.\r\n'), /^554 5\.6\.0 /, 'a bare CR hiding a header is refused');
  t.match(await c.command('NOOP'), /^250 /, 'the session survives the refusals');
  const seen = await subjects();
  t.ok(seen.includes('split crlf'));
  t.notOk(seen.some((s) => /split bare cr|header cr/.test(s)), 'refused messages were not stored');
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${queuedId(accepted)}`);
  t.equal(got.body.text, 'line one\nline two\n');
});

t.test('overlong command lines: refused or closed cleanly, never a crash', async (t) => {
  const c = await session(t);
  t.match(await c.command(`EHLO ${'h'.repeat(5000)}.example`), /^501 /, 'a 5,000-octet EHLO name (it would go into the Received line)');
  t.match(await c.command(`RCPT TO:<${'a'.repeat(600)}@hostile-inbox.net>`), /^5\d\d /, 'a 600-octet local part (RFC 5321 allows 64)');
  t.match(await c.command(`NOOP ${'x'.repeat(4000)}`), /^250 /, 'a long but bounded line is still one command');
  // Past smtp-server's 16 KiB command line limit: 421 and the connection closes.
  c.write(`MAIL FROM:<${'b'.repeat(20_000)}@far.example>\r\n`);
  t.match(await c.reply(), /^421 /, 'a 20 KB command line: 421');
  t.equal(await c.reply(), 'closed', 'and the server closes the connection');

  // No line end at all: the server must not buffer it without bound.
  const before = process.memoryUsage().rss;
  const d = await session(t);
  const chunk = 'y'.repeat(64 * 1024);
  for (let i = 0; i < 64 && !d.closed; i++) {
    d.write(chunk);
    await new Promise((r) => setImmediate(r));
  }
  t.match(await d.reply(), /^421 |^closed$/, 'a 4 MB line without an end: 421 / closed');
  t.equal(await d.reply(), 'closed');
  t.ok(process.memoryUsage().rss - before < 300 * 1024 * 1024, 'memory stays bounded');

  const fresh = await session(t);
  t.match(await fresh.command('NOOP'), /^250 /, 'the listener still serves new sessions');
});

t.test('overlong data lines: a 300 KB line is stored intact; past the size limit 552 and nothing kept', async (t) => {
  const longLine = 'L'.repeat(300 * 1024);
  const c = await session(t);
  await c.command('MAIL FROM:<x@far.example>');
  await c.command('RCPT TO:<desk@hostile-inbox.net>');
  await c.command('DATA');
  const reply = await c.sendRawReply(message('long line', longLine));
  t.match(reply, /^250 /, 'accepted, as Postfix does: the line is kept, not cut');
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${queuedId(reply)}`);
  const raw = Buffer.from(await (await fetch(got.body.raw.download_url)).arrayBuffer()).toString('latin1');
  t.ok(raw.includes(`\r\n${longLine}\r\n`), 'the raw source holds the whole line');

  const spoolBefore = rig.spoolFiles();
  const rowsBefore = await rig.receivedRows();
  await c.command('MAIL FROM:<x@far.example>');
  await c.command('RCPT TO:<desk@hostile-inbox.net>');
  await c.command('DATA');
  t.match(await c.sendRawReply(message('huge line', 'H'.repeat(2 * 1024 * 1024))), /^552 /, 'a 2 MB line over a 1 MiB limit: 552');
  t.match(await c.command('NOOP'), /^250 /, 'the session survives');
  t.equal(await rig.receivedRows(), rowsBefore, 'no record');
  t.equal(rig.spoolFiles(), spoolBefore, 'no spool file left behind');
});

t.test('too many recipients: 452 after the limit, the session goes on and only the accepted ones get the message', async (t) => {
  const c = await session(t);
  await c.command('MAIL FROM:<x@far.example>');
  const rcpts = Array.from({ length: 800 }, (_, i) => `RCPT TO:<r${i}@hostile-inbox.net>\r\n`).join('');
  c.write(rcpts);
  const replies = await c.drain(800);
  t.equal(replies.length, 800, 'one reply per pipelined RCPT');
  t.equal(replies.filter((r) => r.startsWith('250 ')).length, 5, 'smtp_max_recipients (5) accepted');
  t.ok(replies.slice(5).every((r) => /^452 /.test(r)), 'every one after the limit: 452 (RFC 5321 4.5.3.1.10), the session stays');
  t.match(await c.command('DATA'), /^354 /);
  const reply = await c.sendRawReply(message('many rcpts'));
  t.match(reply, /^250 /);
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${queuedId(reply)}`);
  t.same(got.body.received_for, ['r0@hostile-inbox.net', 'r1@hostile-inbox.net', 'r2@hostile-inbox.net', 'r3@hostile-inbox.net', 'r4@hostile-inbox.net']);
});

t.test('oversize messages: 552 at MAIL for a declared SIZE, 552 after DATA otherwise; nothing stored', async (t) => {
  const spoolBefore = rig.spoolFiles();
  const rowsBefore = await rig.receivedRows();
  const c = await session(t);
  t.match(await c.command('MAIL FROM:<x@far.example> SIZE=50000000'), /^552 /, 'declared SIZE over the limit');
  t.match(await c.command('MAIL FROM:<x@far.example>'), /^250 /);
  await c.command('RCPT TO:<desk@hostile-inbox.net>');
  await c.command('DATA');
  const body = Array.from({ length: 3000 }, () => 'z'.repeat(998)).join('\r\n');
  t.match(await c.sendRawReply(message('oversize', body)), /^552 /, '3 MB undeclared: 552');
  t.match(await c.command('NOOP'), /^250 /, 'the session survives');
  t.equal(await rig.receivedRows(), rowsBefore, 'no record');
  t.equal(rig.spoolFiles(), spoolBefore, 'no spool file');
  t.notOk((await subjects()).includes('oversize'));
});

t.test('STARTTLS command injection: commands pipelined behind STARTTLS in plaintext are discarded', async (t) => {
  const c = await session(t);
  const before = await rig.receivedRows();
  c.write('STARTTLS\r\nMAIL FROM:<injected@far.example>\r\nRCPT TO:<desk@hostile-inbox.net>\r\nDATA\r\nSubject: injected\r\n\r\nx\r\n.\r\n');
  t.match(await c.reply(), /^220 /, '220 to STARTTLS');
  await c.startTls();
  t.equal(c.plaintextAfterStartTls, '', 'no plaintext reply to the injected commands');
  t.match(await c.command('RCPT TO:<desk@hostile-inbox.net>'), /^503 /, 'no envelope survived the upgrade');
  t.match(await c.command('EHLO client.example'), /^250[ -]/, 'EHLO again over TLS');
  t.match(await c.command('RCPT TO:<desk@hostile-inbox.net>'), /^503 /, 'still no injected MAIL FROM');
  t.match(await c.command('MAIL FROM:<real@far.example>'), /^250 /);
  t.match(await c.command('RCPT TO:<desk@hostile-inbox.net>'), /^250 /);
  t.match(await c.command('DATA'), /^354 /);
  t.match(await c.sendRawReply(message('after starttls')), /^250 /, 'the real message goes through over TLS');
  t.equal(await rig.receivedRows(), before + 1, 'exactly one message stored: the injected one never was');
  t.notOk((await subjects()).includes('injected'));
});

t.test('open-relay tricks are refused and nothing is delivered anywhere', async (t) => {
  const relay = [
    'user%other-victim.net@hostile-inbox.net', // the percent hack
    'other-victim.net!user@hostile-inbox.net', // a bang path
    '"user@other-victim.net"@hostile-inbox.net', // a quoted local part holding a foreign address
    '"user%other-victim.net"@hostile-inbox.net',
    '@a-victim.net:user@b-victim.net', // a source route (stripped by RFC 5321 appendix C) to a foreign domain
    '@hostile-inbox.net:user@other-victim.net', // a source route through svc's own domain
    '@a-victim.net,@hostile-inbox.net:user@victim-target.net',
    'user@other-victim.net', // a plain foreign domain
    'user@other-victim.net@hostile-inbox.net',
    'user@hostile-inbox.net@other-victim.net',
    'user@[127.0.0.1]', // an address literal
    'user@other-victim.net.', // a trailing dot
    'postmaster@victim-target.net',
    'user@hostile-inbox.net.other-victim.net',
  ];
  const before = await rig.receivedRows();
  for (const address of relay) {
    const c = await session(t);
    t.match(await c.command('MAIL FROM:<spammer@far.example>'), /^250 /);
    t.match(await c.command(`RCPT TO:<${address}>`), /^5\d\d /, `RCPT TO:<${address}> is refused`);
    t.match(await c.command('DATA'), /^5\d\d /, 'no transaction without a recipient');
    c.close();
  }
  t.equal(await rig.receivedRows(), before, 'nothing stored for anyone');
  await nothingDeliveredAnywhere(t);
});

t.test('a relay attempt next to a real recipient: only the receiving domain gets the message, nothing leaves', async (t) => {
  const c = await session(t);
  await c.command('MAIL FROM:<spammer@far.example>');
  t.match(await c.command('RCPT TO:<user%other-victim.net@hostile-inbox.net>'), /^550 /);
  t.match(await c.command('RCPT TO:<victim@other-victim.net>'), /^550 /);
  t.match(await c.command('RCPT TO:<@other-victim.net:desk@hostile-inbox.net>'), /^250 /, 'a source route to svc\'s own domain is ignored (RFC 5321 appendix C): local delivery');
  t.match(await c.command('DATA'), /^354 /);
  const reply = await c.sendRawReply(message('mixed relay'));
  t.match(reply, /^250 /);
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${queuedId(reply)}`);
  t.same(got.body.received_for, ['desk@hostile-inbox.net'], 'stored for the receiving domain only');
  await nothingDeliveredAnywhere(t);
});

t.test('command floods: a bounded number of replies, then 421 and the connection closes', async (t) => {
  const before = process.memoryUsage();
  const flood = async (lines: string, max: number) => {
    const c = await session(t);
    c.write(lines);
    const replies = await c.drain(max + 50);
    t.ok(c.closed, 'the server closed the connection');
    return replies;
  };
  const repeat = (line: string, n: number) => `${line}\r\n`.repeat(n);

  // The session's EHLO is junk too: EHLO and 99 NOOPs make smtp_max_junk_commands (100).
  const noop = await flood(repeat('NOOP', 5000), 100);
  t.equal(noop.filter((r) => r.startsWith('250 ')).length, 99, 'EHLO + 99 NOOPs answered');
  t.match(noop.at(-1), /^421 4\.7\.0 Too many commands without mail/, 'then 421');
  t.equal(noop.length, 100, 'and nothing more');

  const rset = await flood(repeat('RSET', 5000), 100);
  t.equal(rset.length, 100);
  t.match(rset.at(-1), /^421 4\.7\.0 /, 'an RSET flood too');

  const mixed = await flood(repeat('VRFY root', 30) + repeat('HELP', 30) + repeat('EHLO again.example', 30) + repeat('NOOP', 5000), 100);
  t.match(mixed.at(-1), /^421 4\.7\.0 /, 'VRFY, HELP and EHLO count as junk as well');
  t.equal(mixed.length, 100);

  const unknown = await flood(repeat('XYZZY', 5000), 10);
  t.ok(unknown.length <= 10, `unknown commands: ${unknown.length} replies`);
  t.match(unknown.at(-1), /^421 /, "smtp-server's own bound: 421 after 10 unknown commands");

  const relay = await flood('MAIL FROM:<spam@far.example>\r\n' + Array.from({ length: 3000 }, (_, i) => `RCPT TO:<u${i}@other-victim.net>\r\n`).join(''), 22);
  t.equal(relay.filter((r) => r.startsWith('550 ')).length, 21, 'smtp_max_errors (20) relay refusals, one more');
  t.match(relay.at(-1), /^421 4\.7\.0 Too many errors/, 'then 421');

  const overshoot = await flood('MAIL FROM:<spam@far.example>\r\n' + Array.from({ length: 3000 }, (_, i) => `RCPT TO:<o${i}@hostile-inbox.net>\r\n`).join(''), 1027);
  t.equal(overshoot.filter((r) => r.startsWith('452 ')).length, 1021, '452s are tolerated up to the overshoot allowance (1000), then count as errors');
  t.match(overshoot.at(-1), /^421 4\.7\.0 Too many errors/);

  const bareCr = await flood(repeat('NOOP\rNOOP', 5000), 22);
  t.equal(bareCr.length, 22, 'bare-CR lines are errors: 21 refusals and a 421');

  // A client that never reads: the server answers a bounded number and drops it.
  const deaf = await hostileClient(rig.smtpPort);
  t.teardown(() => deaf.close());
  const chunk = Buffer.from(repeat('NOOP', 10_000));
  for (let i = 0; i < 40 && !deaf.closed; i++) {
    deaf.write(chunk);
    await new Promise((r) => setImmediate(r));
  }
  const deafReplies = await deaf.drain(200);
  t.ok(deaf.closed, 'a 2.4 MB NOOP flood nobody reads: closed');
  t.ok(deafReplies.length <= 102, `after ${deafReplies.length} replies`);

  const after = process.memoryUsage();
  t.comment(`floods: rss ${mb(before.rss)} → ${mb(after.rss)} MB, heap ${mb(before.heapUsed)} → ${mb(after.heapUsed)} MB`);
  t.ok(after.rss - before.rss < 300 * 1024 * 1024, 'memory stays bounded (+300 MB)');

  // Junk and errors are counted between accepted messages: a long, busy, honest session is fine.
  const honest = await session(t);
  for (let round = 0; round < 3; round++) {
    const junk: string[] = [];
    for (let i = 0; i < 60; i++) junk.push(await honest.command(i % 2 ? 'NOOP' : 'RSET'));
    t.ok(junk.every((r) => r.startsWith('250 ')), '60 NOOP/RSET answered 250');
    await honest.command('MAIL FROM:<honest@far.example>');
    await honest.command('RCPT TO:<desk@hostile-inbox.net>');
    await honest.command('DATA');
    t.match(await honest.sendRawReply(message(`honest ${round}`)), /^250 /, `message ${round + 1} after 60 junk commands`);
  }
  await nothingDeliveredAnywhere(t);
});


// Last, as a control: the rig's outbound path does deliver to the fake MX, so the "nothing
// delivered anywhere" checks above could have seen a leak.
t.test('control: a real API send to the same foreign domain does reach the fake MX', async (t) => {
  fakeSendingDomains(rig.app, rig.dns).add({ teamId: team.teamId, name: 'sender-hostile.net' });
  const sent = await rig.api(team.token, 'POST', '/emails', { from: 'hello@sender-hostile.net', to: 'user@other-victim.net', subject: 'control', text: 'control' });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  await waitFor('the control email at the fake MX', async () => rig.mx.received.length > 0, 30_000, 100);
  t.equal(rig.mx.received.length, 1, 'delivered to the fake MX');
  t.equal(rig.mx.received[0]?.rcptTo, 'user@other-victim.net');
});
