import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../../storage/sql/index.js';
import { startTestAppliance, type TestAppliance } from './appliance.js';
import { exited, spawnOutboundProcess } from './crash-rig.js';
import type { TestDnsServer } from './dns-server.js';
import { mailZone } from './email-fixtures.js';
import { startFakeMx, type FakeMx } from './fake-mx.js';
import { call } from './http.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import { startTestRedis, type TestRedis } from './redis.js';
import { verifyDomainThroughApi } from './sending.js';

// Several outbound nodes on one database and one Redis (test/scale-out and bench/scale-out.ts):
// an in-process API accepts the mail; each node is a `bin/svc start --role outbound` child logging
// at info to a file of its own, so each node's attempts and node id can be read back. On
// PostgreSQL each node has a data folder of its own (sharing only the secret key, so it can open
// the domains' DKIM keys); on SQLite every node runs on the API's folder and its database file,
// each in one of the region's places (`outbound_processes`).

export interface NodeSettings {
  concurrency: number;
  perDomainConnections: number;
  leaseS: number;
}

export interface OutboundNode {
  name: string;
  dataDir: string;
  log: string;
  child?: ChildProcess;
  start(): ChildProcess;
  /** kill -9. */
  kill(): Promise<void>;
  stop(): Promise<void>;
  /** The node ids this node's processes logged at start, in order. */
  nodeIds(): string[];
  /** Delivery attempts its processes logged, by status. */
  attempts(): Record<string, number>;
}

export interface ScaleRig {
  pg?: TestDatabase;
  redis: TestRedis;
  dns: TestDnsServer;
  mx: FakeMx;
  app: TestAppliance;
  db: Db;
  node(name: string, settings: NodeSettings): OutboundNode;
  accept(count: number): Promise<number>;
  states(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

export interface ScaleRigOptions {
  replyDelayMs?: number;
  /** postgres (the default): nodes with folders of their own; sqlite: nodes on one folder. */
  engine?: 'postgres' | 'sqlite';
  /** outbound_processes of the nodes on SQLite (default 2). */
  places?: number;
}

export async function startScaleRig(options: ScaleRigOptions = {}): Promise<ScaleRig> {
  const sqlite = options.engine === 'sqlite';
  const pg = sqlite ? undefined : await createTestDatabase();
  const redis = await startTestRedis();
  const dns = await mailZone(['inbox-one.net']);
  const mx = await startFakeMx({ replyDelayMs: options.replyDelayMs, keepRaw: false });
  const app = await startTestAppliance({
    redis, roles: ['api'], ...(pg ? { databaseUrl: pg.url } : {}),
    env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0' },
  });
  const team = await app.newTeam('Scale');
  await verifyDomainThroughApi(app.baseUrl, team.token, dns, 'scale-sender.net');
  const db = app.appliance.services.database.db;
  const nodes: OutboundNode[] = [];
  const folders: string[] = [];
  let accepted = 0;
  return {
    pg, redis, dns, mx, app, db,
    node(name, settings) {
      const ownDir = mkdtempSync(join(tmpdir(), `svc-node-${name}-`));
      folders.push(ownDir);
      const shared: Record<string, string> = pg
        ? { SVC_DATA_DIR: ownDir, SVC_DATABASE_URL: pg.url, SVC_SECRET_KEY_FILE: join(app.config.data_dir, 'secret.key') }
        : { SVC_DATA_DIR: app.config.data_dir, SVC_OUTBOUND_PROCESSES: String(options.places ?? 2) };
      const node = outboundNode(name, join(ownDir, 'outbound.log'), {
        ...shared, SVC_REDIS_URL: redis.url,
        SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_POLL_S: '1',
        SVC_OUTBOUND_LEASE_S: String(settings.leaseS), SVC_LOG_LEVEL: 'info',
        SVC_REGIONS: JSON.stringify({ 'us-east-1': { concurrency: settings.concurrency, per_domain_connections: settings.perDomainConnections } }),
      });
      nodes.push(node);
      return node;
    },
    async accept(count) {
      const batches: Record<string, string>[][] = [];
      for (let start = 0; start < count; start += 100) {
        batches.push(Array.from({ length: Math.min(100, count - start) }, (_, i) => {
          const n = accepted + start + i;
          return { from: 'Scale <s@scale-sender.net>', to: `r${n}@inbox-one.net`, subject: `Scale ${n}`, text: `Message ${n}` };
        }));
      }
      accepted += count;
      let next = 0;
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (next < batches.length) {
          const body = batches[next++]!;
          const r = await call(app.baseUrl, 'POST', '/emails/batch', { token: team.token, body });
          if (r.status !== 200) throw new Error(`batch refused: ${JSON.stringify(r.body)}`);
        }
      }));
      return count;
    },
    async states() {
      const rows = await db.selectFrom('email_recipients').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
      return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
    },
    async stop() {
      for (const node of nodes) await node.stop();
      await app.stop();
      await mx.stop();
      await dns.stop();
      await redis.stop();
      await pg?.drop();
      for (const dir of folders) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function outboundNode(name: string, log: string, env: Record<string, string>): OutboundNode {
  const dataDir = env.SVC_DATA_DIR!;
  const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);
  const node: OutboundNode = {
    name, dataDir, log,
    start() {
      node.child = spawnOutboundProcess(env, log);
      return node.child;
    },
    async kill() {
      const child = node.child;
      if (!child) return;
      node.child = undefined;
      child.kill('SIGKILL');
      await exited(child);
    },
    async stop() {
      const child = node.child;
      if (!child) return;
      node.child = undefined;
      child.kill('SIGTERM');
      await exited(child);
    },
    nodeIds: () => lines().filter((l) => l.msg === 'outbound queues started').map((l) => String(l.node)),
    attempts() {
      const counts: Record<string, number> = {};
      for (const l of lines()) if (l.msg === 'delivery attempt') counts[String(l.status)] = (counts[String(l.status)] ?? 0) + 1;
      return counts;
    },
  };
  return node;
}
