import type { Test } from 'tap';
import { waitFor } from './deadline.js';
import type { NodeSettings, ScaleRig } from './scale-out-rig.js';

// Two outbound nodes share one region's queue while node b is killed with kill -9 twice (the
// scale-out tests, on PostgreSQL and on SQLite): the first time node a takes b's claimed
// recipients once their leases lapse (b stays down until then), the second time b is started
// again at once and frees its dead predecessor's claims itself. At the end every message reached
// the MX at most once; every one svc calls delivered reached it exactly once; the only ones not
// delivered are the killed node's submissions that were in their data phase (ambiguous: never
// resent); nothing is left queued or submitting; and the per-destination limit held across both
// nodes (never more data phases at once at the MX).

export interface KilledTwice {
  messages: number;
  settings: NodeSettings;
}

/** What the scenario ended with, for the test naming its engine to state its own figures. */
export interface KilledTwiceOutcome {
  delivered: number;
  ambiguous: number;
  /** Distinct messages the MX took. */
  atMx: number;
}

export async function twoNodesKilledTwice(t: Test, rig: ScaleRig, { messages, settings }: KilledTwice): Promise<KilledTwiceOutcome> {
  t.equal(await rig.accept(messages), messages);
  const a = rig.node('a', settings);
  const b = rig.node('b', settings);
  a.start();
  b.start();
  const atMx = () => rig.mx.received.length;
  const leasedBy = async (owner: string) => Number((await rig.db.selectFrom('email_recipients').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('lease_owner', '=', owner).where('state', 'in', ['queued', 'submitting']).executeTakeFirst())?.n ?? 0);

  // kill -9 #1; B stays down: A must take what B held once B's leases lapse.
  await waitFor(`${Math.floor(messages * 0.3)} messages at the MX`, async () => atMx() >= messages * 0.3, 90_000, 50);
  const [firstB] = await waitFor('node b to log its node id', async () => b.nodeIds().length === 1 && b.nodeIds(), 10_000);
  await waitFor('node b to hold some recipients', async () => (await leasedBy(firstB!)) > 0, 10_000, 5);
  await b.kill();
  const before = atMx();
  // What node a must take over: without it, the takeover wait below would pass on nothing.
  const held = await leasedBy(firstB!);
  t.ok(held > 0 && before < messages, `kill 1 landed mid-queue (${before} messages at the MX) while node b (${firstB}) held recipients (${held})`);
  await waitFor('node a to go on delivering alone', async () => atMx() > before + 100, 30_000, 50);
  await waitFor('node a to take over what node b held', async () => (await leasedBy(firstB!)) === 0, 30_000, 100);

  // kill -9 #2: B, started again, is killed as soon as it holds recipients; then it starts again at once.
  b.start();
  await waitFor('node b to hold some recipients again', async () => b.nodeIds().length === 2 && (await leasedBy(b.nodeIds()[1]!)) > 0, 20_000, 5);
  await b.kill();
  const second = atMx();
  t.ok(second < messages, `kill 2 landed mid-queue (${second} of ${messages} messages at the MX)`);
  b.start();

  await waitFor('the queue to drain', async () => { const s = await rig.states(); return !s.queued && !s.submitting && s; }, 120_000, 200);
  const states = await rig.states();

  const accepted = rig.mx.accepted();
  const rows = await rig.db.selectFrom('email_recipients').innerJoin('emails', 'emails.id', 'email_recipients.email_id')
    .select(['emails.message_id', 'email_recipients.state']).execute();
  t.equal(rows.length, messages);
  t.same([...accepted].filter(([, n]) => n > 1), [], 'no Message-ID reached the MX twice');
  t.same(rows.filter((r) => r.state === 'delivered' && accepted.get(r.message_id) !== 1), [], 'every message svc calls delivered reached the MX exactly once');
  const known = new Set(rows.map((r) => r.message_id));
  t.same([...accepted.keys()].filter((id) => !known.has(id)), [], 'the MX took nothing svc did not send');
  t.same(Object.keys(states).filter((s) => s !== 'delivered' && s !== 'ambiguous'), [], `nothing queued, submitting, failed or bounced: none lost (${JSON.stringify(states)})`);
  const ambiguous = states.ambiguous ?? 0;
  t.ok(ambiguous <= 2 * settings.concurrency, `only the killed node's data phases are ambiguous (${ambiguous}, at most ${2 * settings.concurrency})`);
  t.equal((states.delivered ?? 0) + ambiguous, messages, 'every message delivered, or ambiguous and never resent');
  t.ok(rig.mx.peakData <= settings.perDomainConnections, `at most ${settings.perDomainConnections} transactions at the MX at once across both nodes (${rig.mx.peakData})`);
  const attempts = { a: a.attempts(), b: b.attempts() };
  t.ok((attempts.a.delivered ?? 0) > 0 && (attempts.b.delivered ?? 0) > 0, `both nodes delivered (attempts logged: ${JSON.stringify(attempts)})`);
  return { delivered: states.delivered ?? 0, ambiguous, atMx: accepted.size };
}
