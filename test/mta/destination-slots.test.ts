import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor, withDeadline } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';
import { startTestRedis } from '../helpers/redis.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// Per-destination connection slots (storage/redis/destination-slots.ts) are shared through Redis
// when several outbound processes may serve a region. On SQLite with outbound_processes 1 the data
// folder's lock makes the process the region's only one: it counts its own connections and sends
// Redis nothing for them. Either way the MX never sees more transactions at once than the limit.
t.setTimeout(120_000);

const dns = await mailZone(['inbox-one.net']);
t.teardown(() => dns.stop());

async function deliverTen(t: Test, processes: number): Promise<{ slotCommands: number; peak: number }> {
  // The MX holds each message a moment, so deliveries overlap and the limit is what stops them.
  const mx = await startFakeMx({ dns: dns.address, replyDelayMs: 150 });
  const redis = await startTestRedis();
  // monitor() opens a connection of its own beside the client's: both are closed at the end.
  const client = new Redis(redis.url);
  const monitor = await client.monitor();
  let slotCommands = 0;
  monitor.on('monitor', (_time: string, args: string[]) => { if (args.some((a) => a.includes('outbound:slots'))) slotCommands++; });
  const app = await startTestAppliance({
    redis, roles: ['api', 'outbound'],
    env: {
      SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port),
      SVC_OUTBOUND_PROCESSES: String(processes),
      SVC_REGIONS: JSON.stringify({ 'us-east-1': { concurrency: 10, per_domain_connections: 2 } }),
    },
  });
  try {
    const team = await app.newTeam('Slots');
    fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
    const to = Array.from({ length: 10 }, (_, i) => `user${i}@inbox-one.net`);
    const sent = await call(app.baseUrl, 'POST', '/emails/batch', { token: team.token, body: to.map((rcpt) => ({ from: 'hello@sender.net', to: rcpt, subject: 'Hi', text: 'Hello' })) });
    t.equal(sent.status, 200, 'the batch is accepted');
    await waitFor('ten messages at the MX', async () => mx.received.length >= 10 || undefined, 60_000);
    return { slotCommands, peak: mx.peakData };
  } finally {
    await app.stop();
    monitor.disconnect();
    client.disconnect();
    await withDeadline('the test redis to stop', redis.stop(), 30_000);
    await mx.stop();
  }
}

t.test('the region\'s only process (SQLite, outbound_processes 1) keeps its limit without Redis', async (t) => {
  const { slotCommands, peak } = await deliverTen(t, 1);
  t.equal(slotCommands, 0, 'no destination-slot command reached Redis');
  t.ok(peak >= 1 && peak <= 2, `at most 2 transactions at the MX at once (${peak})`);
});

t.test('with places for more processes (outbound_processes 2) the slots are shared through Redis', async (t) => {
  const { slotCommands, peak } = await deliverTen(t, 2);
  t.ok(slotCommands >= 10, `a slot taken and given back in Redis for the deliveries (${slotCommands} commands)`);
  t.ok(peak >= 1 && peak <= 2, `at most 2 transactions at the MX at once (${peak})`);
});
