// Scale-out: one outbound process against two delivering the same queue on one PostgreSQL and
// one Redis (issue #18). For each run a fresh database gets BENCH_MESSAGES emails through the API
// (in this process) while they are held, the outbound nodes — `bin/svc start --role outbound`
// children, each with a data folder of its own — start and settle, then the queue is released
// and the time until every recipient is delivered is measured. Printed: msg/s in all and per node
// (each node's delivery attempts, read from its log), the two-node/one-node ratio, and the core
// count of the machine beside it: on a box with fewer cores than processes (the API, the fake MX
// in this process, the nodes, PostgreSQL, Redis), a second node shares the same CPUs.
//
// The fake MX (test/helpers/fake-mx.ts, in this process) answers each message after
// BENCH_REPLY_DELAY_MS (0): with a delay, a node is bound by its concurrency and the remote's
// latency rather than by CPU, which is where a second node helps most.
// BENCH_ENGINE=sqlite: the same on SQLite, the nodes being processes on one data folder
// (outbound_processes 2) instead of nodes with folders of their own on PostgreSQL.
// Tuning (environment): BENCH_MESSAGES (5000), BENCH_CONCURRENCY (20 per node), BENCH_REPLY_DELAY_MS (0), BENCH_ENGINE (postgres).
import { availableParallelism, cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { redisKeys } from '../storage/redis/index.js';
import { startScaleRig, type OutboundNode } from '../test/helpers/scale-out-rig.js';

const MESSAGES = intFromEnv('BENCH_MESSAGES', 5000);
const CONCURRENCY = intFromEnv('BENCH_CONCURRENCY', 20);
const REPLY_DELAY_MS = intFromEnv('BENCH_REPLY_DELAY_MS', 0, true);
const ENGINE = process.env.BENCH_ENGINE === 'sqlite' ? 'sqlite' : 'postgres';

function intFromEnv(name: string, fallback: number, zeroOk = false): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && (v > 0 || (zeroOk && v === 0)) && process.env[name] !== undefined ? Math.floor(v) : fallback;
}

interface Run { nodes: number; seconds: number; perSecond: number; perNode: { name: string; delivered: number; perSecond: number }[]; duplicates: number }

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`bench: gave up waiting for ${what}`);
    await sleep(20);
  }
}

async function run(nodeCount: number): Promise<Run> {
  const rig = await startScaleRig({ replyDelayMs: REPLY_DELAY_MS, engine: ENGINE, places: 2 });
  try {
    await rig.accept(MESSAGES);
    // Held while the nodes start, so every node meets the whole queue at the same moment.
    await rig.db.updateTable('email_recipients').set({ state: 'held' }).where('state', '=', 'queued').execute();
    const nodes: OutboundNode[] = [];
    for (let i = 0; i < nodeCount; i++) {
      // The per-destination limit across nodes is not what is measured: room for every node's concurrency.
      const node = rig.node(`n${i + 1}`, { concurrency: CONCURRENCY, perDomainConnections: CONCURRENCY * nodeCount, leaseS: 30 });
      node.start();
      nodes.push(node);
    }
    await until('the nodes to start', () => nodes.every((n) => n.nodeIds().length === 1), 60_000);
    await sleep(500);
    const started = performance.now();
    await rig.db.updateTable('email_recipients').set({ state: 'queued' }).where('state', '=', 'held').execute();
    const publisher = rig.app.appliance.services.redis;
    await publisher.publish(redisKeys.outboundWake('us-east-1'), '1');
    await until('every message delivered', async () => (await rig.states()).delivered === MESSAGES, 600_000);
    const seconds = (performance.now() - started) / 1000;
    for (const node of nodes) await node.stop();
    return {
      nodes: nodeCount, seconds, perSecond: MESSAGES / seconds,
      perNode: nodes.map((n) => ({ name: n.name, delivered: n.attempts().delivered ?? 0, perSecond: (n.attempts().delivered ?? 0) / seconds })),
      duplicates: [...rig.mx.accepted()].filter(([, n]) => n > 1).length,
    };
  } finally {
    await rig.stop();
  }
}

const cores = `${availableParallelism()} cores available (${cpus().length} CPUs, ${cpus()[0]?.model ?? 'unknown'})`;
console.log(`scale-out on ${ENGINE}: ${MESSAGES} messages, concurrency ${CONCURRENCY} per node, MX reply delay ${REPLY_DELAY_MS} ms; ${cores}`);
const results: Run[] = [];
for (const n of [1, 2]) {
  const r = await run(n);
  results.push(r);
  const each = r.perNode.map((p) => `${p.name} ${p.delivered} (${p.perSecond.toFixed(0)} msg/s)`).join(', ');
  console.log(`${n} outbound process${n > 1 ? 'es' : ''}: ${r.perSecond.toFixed(0)} msg/s in ${r.seconds.toFixed(1)} s — ${each}; duplicates at the MX: ${r.duplicates}`);
}
const [one, two] = results;
console.log(`ratio two/one: ${(two!.perSecond / one!.perSecond).toFixed(2)} on ${cores}`);
process.exit(0);
