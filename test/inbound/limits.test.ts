import t from 'tap';
import { ConnectionLimits } from '../../mta/inbound/connection-limits.js';
import { rawSmtp, type RawSmtp } from '../helpers/raw-smtp.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';

// The listener's limits: connections per client address (open at once and per minute), message
// size, recipients per message; PROXY protocol is off unless configured.
const rig = await startInboundRig({
  env: {
    SVC_SMTP_MAX_CONNECTIONS_PER_IP: '2', SVC_SMTP_CONNECTION_RATE_PER_IP: '6', SVC_SMTP_MAX_MESSAGE_BYTES: '4096',
    SVC_SMTP_MAX_RECIPIENTS: '2',
  },
});
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Limits');
rig.addDomain(team.teamId, 'limits-inbox.net');

t.test('ConnectionLimits forgets the window after a minute', async (t) => {
  let now = 0;
  const limits = new ConnectionLimits({ maxPerIp: 10, maxPerNetwork: 100, ratePerMinute: 2 }, () => now);
  t.ok(limits.admit('192.0.2.1').ok);
  t.ok(limits.admit('192.0.2.1').ok);
  t.notOk(limits.admit('192.0.2.1').ok, 'third in the minute');
  t.ok(limits.admit('192.0.2.2').ok, 'another address has its own window');
  now = 60_001;
  limits.release('192.0.2.1');
  t.ok(limits.admit('192.0.2.1').ok, 'a minute later');
});

// Size, recipients and PROXY first: the connection test then uses up this minute's window.
t.test('message size, recipients per message, and no PROXY protocol by default', async (t) => {
  const big = rfc822({ From: 'x@far.example', Subject: 'big' }, 'y'.repeat(5000));
  const err = await rig.send({ from: 'x@far.example', to: ['a@limits-inbox.net'] }, big).then(() => undefined, (e: { responseCode?: number }) => e);
  t.equal(err?.responseCode, 552, 'over smtp_max_message_bytes: 552');

  const smtp = await rawSmtp(rig.smtpPort);
  t.teardown(() => smtp.close());
  t.match(await smtp.command('PROXY TCP4 198.51.100.1 127.0.0.1 40000 25'), /^5\d\d /, 'a PROXY header is not understood when off');
  t.match(await smtp.command('EHLO client.example'), /^250[ -]/);
  await smtp.command('MAIL FROM:<x@far.example>');
  t.match(await smtp.command('RCPT TO:<a@limits-inbox.net>'), /^250 /);
  t.match(await smtp.command('RCPT TO:<b@limits-inbox.net>'), /^250 /);
  t.match(await smtp.command('RCPT TO:<c@limits-inbox.net>'), /^452 /, 'past smtp_max_recipients: 452');
  await smtp.command('QUIT');
});

t.test('open connections per address, then new connections per minute', async (t) => {
  const open: RawSmtp[] = [];
  t.teardown(() => open.forEach((s) => s.close()));
  for (let i = 0; i < 2; i++) {
    const s = await rawSmtp(rig.smtpPort);
    open.push(s);
    t.match(s.greeting, /^220 /, `connection ${i + 1} is greeted`);
  }
  const third = await rawSmtp(rig.smtpPort);
  open.push(third);
  t.match(third.greeting, /^421 4\.7\.0 too many connections from 127\.0\.0\.1/, 'a third at once is refused 421');
  open.splice(0).forEach((s) => s.close());
  await new Promise((r) => setTimeout(r, 200)); // let the server see the closes

  // Three connections so far this minute (the refused one counts as an attempt only once admitted).
  const more: string[] = [];
  for (let i = 0; i < 5; i++) {
    const s = await rawSmtp(rig.smtpPort);
    more.push(s.greeting);
    if (s.greeting.startsWith('220')) await s.command('QUIT'); // a refused connection is closed by the server
    s.close();
  }
  t.ok(more.some((g) => /^421 4\.7\.0 too many new connections/.test(g)), 'past the per-minute rate: 421');
});

