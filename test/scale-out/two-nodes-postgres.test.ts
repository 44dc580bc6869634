import t from 'tap';
import { startScaleRig, type NodeSettings } from '../helpers/scale-out-rig.js';
import { twoNodesKilledTwice } from '../helpers/scale-out-scenario.js';

// The scale-out path (issue #18): two outbound nodes — separate `bin/svc start --role outbound`
// processes with data folders of their own — share one region's queue on one PostgreSQL and one
// Redis while node b is killed with kill -9 twice during 5,000 messages to one fake MX
// (test/helpers/scale-out-scenario.ts says what must hold).
t.setTimeout(170_000);

// Slots and claims are leases: a node starved of CPU past its lease loses them to the other node.
// Ten seconds keeps that out of reach on a loaded test machine (a restarted node frees its
// predecessor's at once, so the kills do not wait for the lease).
const settings: NodeSettings = { concurrency: 10, perDomainConnections: 8, leaseS: 10 };

t.test('two nodes, one PostgreSQL queue, kill -9 twice: every message delivered once, none lost', async (t) => {
  const rig = await startScaleRig();
  t.teardown(() => rig.stop());
  const outcome = await twoNodesKilledTwice(t, rig, { messages: 5000, settings });
  t.equal(outcome.delivered + outcome.ambiguous, 5000, `on PostgreSQL every message delivered (${outcome.delivered}) or ambiguous (${outcome.ambiguous})`);
  t.ok(outcome.atMx >= outcome.delivered, `the MX took each delivered message (${outcome.atMx} distinct)`);
});
