import t from 'tap';
import type { OutboundRole } from '../../bin/roles/outbound.js';
import { sweepAmbiguous } from '../../core/emails/ambiguous.js';
import { emailsRepo } from '../../storage/repos/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { startHostileMx, type HostileBehaviour, type HostileMx } from '../helpers/fake-mx.js';
import { call, lastEventOf } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { waitFor } from '../helpers/deadline.js';
import { eventsOf, mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';

// A remote MX that misbehaves, against svc's real outbound role: one misbehaving MX per
// destination domain, each on its own loopback address (127.0.0.N) and the configured SMTP port.
// For every fault: the attempt ends within the configured timeouts, memory stays bounded while an
// endless reply streams, a refused or cut-short attempt is retried (and then delivered once), and
// data without a reply follows the reliability contract: never resent, failed
// `ambiguous_submission` after two hours.
const CONNECT_S = 2;
const REPLY_S = 2;
const TRANSACTION_S = 5;
/** Generous: the configured timeout plus time for a loaded 2-core machine. */
const SLACK_MS = 10_000;

const faults: { behaviour: HostileBehaviour; bound: number; ambiguous: boolean }[] = [
  { behaviour: 'silent-greeting', bound: CONNECT_S, ambiguous: false },
  { behaviour: '421-after-mail', bound: REPLY_S, ambiguous: false },
  { behaviour: '421-after-rcpt', bound: REPLY_S, ambiguous: false },
  { behaviour: 'stall-after-rcpt', bound: REPLY_S, ambiguous: false },
  { behaviour: 'trickle-after-mail', bound: TRANSACTION_S, ambiguous: false },
  { behaviour: 'endless-ehlo', bound: TRANSACTION_S, ambiguous: false },
  { behaviour: 'hang-after-data', bound: REPLY_S, ambiguous: true },
  { behaviour: 'endless-after-data', bound: TRANSACTION_S, ambiguous: true },
];
const domainOf = (b: HostileBehaviour) => `${b}.hostile-mx.net`;

const port = await freePort();
const dns = await mailZone(faults.map((f) => domainOf(f.behaviour)));
const mxs = new Map<HostileBehaviour, HostileMx>();
for (const [i, f] of faults.entries()) {
  const host = `127.0.0.${i + 2}`;
  dns.set(`mx.${domainOf(f.behaviour)}`, [{ type: 'A', value: host }]);
  // trickle: one line every 500 ms, well inside the 2 s reply timeout, so only the transaction bound ends it.
  mxs.set(f.behaviour, await startHostileMx({ host, port, behaviour: f.behaviour, trickleMs: 500 }));
}
const clock = testClock();
const app = await startTestAppliance({
  clock, roles: ['api', 'outbound'],
  env: {
    SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(port),
    SVC_OUTBOUND_CONNECT_TIMEOUT_S: String(CONNECT_S), SVC_OUTBOUND_REPLY_TIMEOUT_S: String(REPLY_S),
    SVC_OUTBOUND_TRANSACTION_TIMEOUT_S: String(TRANSACTION_S), SVC_OUTBOUND_SIGN_THREADS: '0',
    SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000',
  },
});
t.teardown(async () => {
  await app.stop();
  for (const mx of mxs.values()) await mx.stop();
  await dns.stop();
});
const outbound = app.appliance.running.find((r) => r.name === 'outbound') as OutboundRole;
const team = await app.newTeam('Remote MX');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'mx-faults-sender.net' });
const db = app.appliance.services.database.db;
const recipient = async (id: string) => (await emailsRepo(db).recipients(id))[0]!;
const lastEvent = (id: string) => lastEventOf(app.baseUrl, team.token, id);

// Memory of this process (svc's roles run in it) sampled while the faults play out.
// The heap and Buffers of this thread are what buffering a reply would grow; RSS also counts the
// signing and checkpoint threads warming up (they start at their first job), so its bound is looser.
const memory = { rss: 0, heap: 0, baseRss: 0, baseHeap: 0 };
const heapAndBuffers = (m: NodeJS.MemoryUsage) => m.heapUsed + m.arrayBuffers;
global.gc?.();
memory.baseRss = memory.rss = process.memoryUsage().rss;
memory.baseHeap = memory.heap = heapAndBuffers(process.memoryUsage());
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  memory.rss = Math.max(memory.rss, m.rss);
  memory.heap = Math.max(memory.heap, heapAndBuffers(m));
}, 50);

// Every fault at once: one email each, timed from the 200 to the end of the first attempt.
const sent = new Map<HostileBehaviour, { id: string; ms: number }>();
await Promise.all(faults.map(async (f) => {
  const r = await call(app.baseUrl, 'POST', '/emails', {
    token: team.token, body: { from: 'Faults <f@mx-faults-sender.net>', to: `rcpt@${domainOf(f.behaviour)}`, subject: f.behaviour, text: `fault ${f.behaviour}` },
  });
  if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
  const started = performance.now();
  await waitFor(`${f.behaviour}: first attempt ended`, async () => {
    const row = await recipient(r.body.id);
    return row.attempts >= 1 && (row.state === 'queued' || row.state === 'ambiguous');
  }, (f.bound * 1000 + SLACK_MS) * 2);
  sent.set(f.behaviour, { id: r.body.id, ms: Math.round(performance.now() - started) });
}));
clearInterval(sampler);

t.test('each attempt ends within its configured timeout', async (t) => {
  for (const f of faults) {
    const { ms } = sent.get(f.behaviour)!;
    t.ok(ms <= f.bound * 1000 + SLACK_MS, `${f.behaviour}: attempt ended after ${ms} ms (bound ${f.bound} s + ${SLACK_MS / 1000} s)`);
  }
  t.equal(mxs.get('trickle-after-mail')!.open() + mxs.get('endless-ehlo')!.open() + mxs.get('stall-after-rcpt')!.open(), 0, 'svc hung up on the stalled and endless peers');
});

t.test('an endless reply is cut off: bounded bytes read, bounded memory', async (t) => {
  const endlessBytes = mxs.get('endless-ehlo')!.streamedBytes + mxs.get('endless-after-data')!.streamedBytes;
  const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
  const rss = memory.rss - memory.baseRss;
  const heap = memory.heap - memory.baseHeap;
  t.ok(endlessBytes > 0, 'the endless replies streamed');
  t.ok(endlessBytes < 32 * 1024 * 1024,
    `svc stopped reading long before the end: ${mib(endlessBytes)} MiB read of the 512 the MX would send (socket buffers aside)`);
  t.ok(rss < 256 * 1024 * 1024, `rss growth under 256 MiB (the endless replies alone would be 512): +${mib(rss)} MiB`);
  t.ok(heap < 64 * 1024 * 1024, `heap and buffer growth under 64 MiB: +${mib(heap)} MiB`);
});

t.test('refused, stalled and endless attempts are deferred with delivery_delayed, then retried and delivered once', async (t) => {
  const retried = faults.filter((f) => !f.ambiguous);
  for (const f of retried) {
    const { id } = sent.get(f.behaviour)!;
    const row = await recipient(id);
    t.equal(row.state, 'queued', `${f.behaviour}: queued for a retry (last reply: ${row.last_response})`);
    t.ok(row.next_attempt_at && Date.parse(row.next_attempt_at) > clock.now().getTime(), `${f.behaviour}: retry scheduled`);
    t.equal(await lastEvent(id), 'delivery_delayed', `${f.behaviour}: the API shows the delay`);
    t.equal(mxs.get(f.behaviour)!.messages.length, 0, `${f.behaviour}: no message data went out`);
  }
  t.match((await recipient(sent.get('421-after-mail')!.id)).last_response, /421/, 'the 421 is the recorded reply');
  // The remote behaves again; the retry is due.
  for (const f of retried) mxs.get(f.behaviour)!.behaviour = 'accept';
  clock.advance(61_000);
  outbound.poke();
  for (const f of retried) {
    const { id } = sent.get(f.behaviour)!;
    await waitFor(`${f.behaviour}: delivered on retry`, async () => (await recipient(id)).state === 'delivered');
    t.equal((await recipient(id)).attempts, 2, `${f.behaviour}: two attempts on record`);
    t.same((await eventsOf(app, id)).map((e) => e.type), ['email.sent', 'email.delivery_delayed', 'email.delivered'], `${f.behaviour}: events`);
    t.same(mxs.get(f.behaviour)!.messages.map((m) => m.messageId), [`<${id}@mx-faults-sender.net>`], `${f.behaviour}: taken exactly once`);
  }
});

t.test('data without a reply: ambiguous, never resent, failed ambiguous_submission after two hours', async (t) => {
  const ambiguous = faults.filter((f) => f.ambiguous);
  for (const f of ambiguous) {
    const { id } = sent.get(f.behaviour)!;
    const row = await recipient(id);
    t.equal(row.state, 'ambiguous', f.behaviour);
    t.match(row.last_response, /no reply after the data/, `${f.behaviour}: ${row.last_response}`);
    t.equal(await lastEvent(id), 'sent', `${f.behaviour}: reported as sent, not delivered`);
    // Even a remote that would now take it gets nothing more.
    mxs.get(f.behaviour)!.behaviour = 'accept';
  }
  clock.advance(30 * 60_000);
  outbound.poke();
  await new Promise((r) => setTimeout(r, 1500));
  for (const f of ambiguous) t.equal(mxs.get(f.behaviour)!.messages.length, 1, `${f.behaviour}: the data went out once`);
  const sweep = () => sweepAmbiguous({ db, clock, logger: app.appliance.services.logger, recorder: app.appliance.services.sending.recorder });
  t.equal(await sweep(), 0, 'not before two hours');
  clock.advance(91 * 60_000);
  t.equal(await sweep(), ambiguous.length);
  for (const f of ambiguous) {
    const { id } = sent.get(f.behaviour)!;
    t.equal(await lastEvent(id), 'failed', f.behaviour);
    t.same((await eventsOf(app, id)).find((e) => e.type === 'email.failed')?.data.failed, { reason: 'ambiguous_submission' }, `${f.behaviour}: the reason`);
    t.equal(mxs.get(f.behaviour)!.messages.length, 1, `${f.behaviour}: still never resent`);
  }
});
