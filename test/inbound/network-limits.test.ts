import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { clientNetwork, ConnectionLimits } from '../../mta/inbound/connection-limits.js';
import { withDeadline } from '../helpers/deadline.js';
import { rawSmtp, type RawSmtp } from '../helpers/raw-smtp.js';
import { startInboundRig } from '../helpers/inbound-rig.js';

// One client network cannot take every SMTP slot: sessions open at once are capped per IPv4 /24
// (and IPv6 /64) as well as per address. Loopback answers for all of 127.0.0.0/8, so the clients
// bind addresses of their own in 127.0.0.0/24 and one outside it.
const rig = await startInboundRig({
  env: { SVC_SMTP_MAX_CONNECTIONS_PER_IP: '2', SVC_SMTP_MAX_CONNECTIONS_PER_NETWORK: '5', SVC_SMTP_MAX_CONNECTIONS: '50' },
});
t.teardown(() => rig.stop());

t.test('the network of an address: IPv4 /24 (mapped IPv6 included), IPv6 /64', async (t) => {
  t.equal(clientNetwork('192.0.2.77'), '192.0.2.0/24');
  t.equal(clientNetwork('::ffff:192.0.2.77'), '192.0.2.0/24', 'an IPv4-mapped IPv6 address counts as IPv4');
  t.equal(clientNetwork('::FFFF:c000:024d'), '192.0.2.0/24', 'in hex form too');
  t.equal(clientNetwork('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  t.equal(clientNetwork('2001:DB8:1:2::9'), '2001:db8:1:2::/64');
  t.equal(clientNetwork('2001:db8::1'), '2001:db8::/64');
  t.equal(clientNetwork('not an address'), 'not an address', 'anything else is its own network');
});

t.test('ConnectionLimits counts open sessions per network; a release frees the slot', async (t) => {
  const limits = new ConnectionLimits({ maxPerIp: 2, maxPerNetwork: 3, ratePerMinute: 0 });
  t.ok(limits.admit('2001:db8:1:2::1').ok);
  t.ok(limits.admit('2001:db8:1:2::2').ok);
  t.ok(limits.admit('2001:db8:1:2:ffff::3').ok);
  t.same(limits.admit('2001:db8:1:2::4'), { ok: false, reason: 'too many connections from 2001:db8:1:2::/64' });
  t.ok(limits.admit('2001:db8:1:3::4').ok, 'the next /64 has its own count');
  t.ok(limits.admit('198.51.100.1').ok);
  t.ok(limits.admit('::ffff:198.51.100.2').ok);
  t.ok(limits.admit('198.51.100.3').ok);
  t.same(limits.admit('::ffff:198.51.100.4'), { ok: false, reason: 'too many connections from 198.51.100.0/24' }, 'mapped and plain IPv4 share the /24');
  limits.release('::ffff:198.51.100.2');
  t.ok(limits.admit('198.51.100.4').ok, 'a closed session frees a slot of its network');
  t.same(limits.admit('198.51.100.5'), { ok: false, reason: 'too many connections from 198.51.100.0/24' });
});

t.test('past the /24 cap the next session hears 421 4.7.0 and is closed; a closing session frees a slot', async (t) => {
  const open: RawSmtp[] = [];
  t.teardown(() => open.forEach((s) => s.close()));
  const connect = async (from: string) => {
    const s = await rawSmtp(rig.smtpPort, '127.0.0.1', from);
    open.push(s);
    return s;
  };
  // Five sessions from three addresses: each within the per-address cap of 2, together the /24's 5.
  for (const from of ['127.0.0.21', '127.0.0.21', '127.0.0.22', '127.0.0.22', '127.0.0.23']) {
    t.match((await connect(from)).greeting, /^220 /, `a session from ${from} is greeted`);
  }
  const refused = await connect('127.0.0.24');
  t.match(refused.greeting, /^421 4\.7\.0 too many connections from 127\.0\.0\.0\/24/, 'the sixth from the /24 is refused');
  await t.resolves(withDeadline('the server to close the refused connection', refused.closed, 10_000), 'the server closes the refused connection');
  t.match((await connect('127.0.1.24')).greeting, /^220 /, 'another /24 is still served');

  const leaving = open[4]!;
  t.match(await leaving.command('QUIT'), /^221 /);
  await leaving.closed;
  // The server counts the close when it sees it: retry a new session until then (10 s at most).
  let greeting = '';
  for (const end = Date.now() + 10_000; Date.now() < end && !greeting.startsWith('220'); await sleep(50)) {
    const s = await connect('127.0.0.25');
    greeting = s.greeting;
  }
  t.match(greeting, /^220 /, 'the freed slot goes to the next session from the /24');
  t.match((await connect('127.0.0.26')).greeting, /^421 4\.7\.0 too many connections from 127\.0\.0\.0\/24/, 'and the /24 is full again');
});
