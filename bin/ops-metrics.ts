import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { OpsMetrics } from '../core/ops-metrics.js';
import { opsGaugesRepo } from '../storage/repos/index.js';
import type { Database } from '../storage/sql/index.js';

// The operator's /metrics registry, one per process; every series carries the process's `role`.
// Counters and histograms move through the port core and the listeners are handed (OpsMetrics);
// gauges are read when scraped — from the database (only in the process that serves /metrics, so
// figures merged from other processes never count them twice) and from this process's listeners.

export interface OpsRegistry {
  readonly port: OpsMetrics;
  readonly role: string;
  /** Reads the queue, the webhook backlog and the database files at each scrape. */
  watchDatabase(database: Database, clock: Clock): void;
  watchInbound(server: { sessions(): number; inflightBytes(): number }): void;
  watchOutbound(queues: readonly { region: { name: string }; inFlight: number }[]): void;
  /** This process's figures as JSON: what a process that does not serve /metrics shares. */
  snapshot(): Promise<string>;
  /** The exposition: this process's figures, with other processes' snapshots added. */
  render(peers: readonly string[]): Promise<string>;
  readonly contentType: string;
}

const LATENCY_BUCKETS = [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 72 * 3600];
const ATTEMPT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const SHORT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The `role` label: the roles a process runs, `all` for all four, and the regions of an outbound
 * process that serves only some (`outbound@eu-west-1`), so that two outbound processes never share
 * a label set and their figures are never added together.
 */
export function roleLabel(roles: readonly string[], allRoles: readonly string[], outboundRegions: readonly string[]): string {
  const named = roles.map((r) => (r === 'outbound' && outboundRegions.length > 0 ? `outbound@${[...outboundRegions].sort().join(',')}` : r));
  return allRoles.every((r) => roles.includes(r)) && outboundRegions.length === 0 ? 'all' : named.sort().join('+');
}

export function opsRegistry(options: { role: string; domainLabels: number; logger: Logger }): OpsRegistry {
  const registry = new Registry();
  registry.setDefaultLabels({ role: options.role });
  // The event-loop delay histogram samples on a timer: prom-client's default 10 ms woke every
  // role process 100 times a second, most of an idle appliance's CPU. At 100 ms a stall longer
  // than that is still always seen in the lag percentiles.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  const labelled = new Set<string>();
  const domainLabel = (domain: string) => {
    const name = domain.toLowerCase();
    if (labelled.has(name)) return name;
    if (labelled.size >= options.domainLabels) return 'other';
    labelled.add(name);
    return name;
  };
  const registers = [registry];
  const deliveries = new Counter({ name: 'svc_deliveries_total', help: 'Outbound delivery attempts by outcome and destination domain (the first domains a process meets; later ones are "other").', labelNames: ['outcome', 'domain'], registers });
  const attemptSeconds = new Histogram({ name: 'svc_delivery_attempt_duration_seconds', help: 'Time of one delivery attempt: route, connection, transaction.', labelNames: ['outcome'], buckets: ATTEMPT_BUCKETS, registers });
  const latency = new Histogram({ name: 'svc_delivery_latency_seconds', help: 'From the email\'s acceptance to an attempt\'s outcome.', labelNames: ['outcome'], buckets: LATENCY_BUCKETS, registers });
  const webhookAttempts = new Counter({ name: 'svc_webhook_attempts_total', help: 'Webhook requests by what followed: succeeded, retry (failed, tried again later) or failed (given up).', labelNames: ['outcome'], registers });
  const webhookSeconds = new Histogram({ name: 'svc_webhook_attempt_duration_seconds', help: 'Time of one webhook request.', buckets: SHORT_BUCKETS, registers });
  const scans = new Counter({ name: 'svc_scan_verdicts_total', help: 'Inbound scans by verdict: clean, virus, error.', labelNames: ['verdict'], registers });
  const scanSeconds = new Histogram({ name: 'svc_scan_duration_seconds', help: 'Time of one inbound scan.', buckets: SHORT_BUCKETS, registers });
  const sources = scrapeSources(registers, options.logger);
  return {
    role: options.role,
    port: {
      deliveryAttempt(r) {
        deliveries.inc({ outcome: r.outcome, domain: domainLabel(r.domain) });
        attemptSeconds.observe({ outcome: r.outcome }, r.attemptSeconds);
        if (r.sinceAcceptedSeconds !== null) latency.observe({ outcome: r.outcome }, Math.max(0, r.sinceAcceptedSeconds));
      },
      webhookAttempt(r) {
        webhookAttempts.inc({ outcome: r.outcome });
        webhookSeconds.observe(r.seconds);
      },
      scanned(r) {
        scans.inc({ verdict: r.verdict });
        scanSeconds.observe(r.seconds);
      },
    },
    watchDatabase: (database, clock) => { sources.database = { database, clock }; },
    watchInbound: (server) => { sources.inbound = server; },
    watchOutbound: (queues) => { sources.outbound = queues; },
    snapshot: async () => JSON.stringify(await registry.getMetricsAsJSON()),
    async render(peers) {
      sources.peers = peers.length;
      if (peers.length === 0) return registry.metrics();
      const all = [await registry.getMetricsAsJSON(), ...peers.map((p) => JSON.parse(p) as object[])];
      return AggregatorRegistry.aggregate(all).metrics();
    },
    contentType: registry.contentType,
  };
}

interface Sources {
  database?: { database: Database; clock: Clock };
  inbound?: { sessions(): number; inflightBytes(): number };
  outbound?: readonly { region: { name: string }; inFlight: number }[];
  peers: number;
}

/** The gauges read at scrape time, from whichever sources this process has. */
function scrapeSources(registers: Registry[], logger: Logger): Sources {
  const sources: Sources = { peers: 0 };
  // A failed read leaves its gauge without series for this scrape rather than failing the scrape.
  const safely = async (what: string, read: () => Promise<void>) => {
    try {
      await read();
    } catch (err) {
      logger.warn({ gauge: what, err: (err as Error).message }, 'metrics gauge could not be read');
    }
  };
  new Gauge({
    name: 'svc_queue_recipients', help: 'Outbound recipients still in play, by region and state (scheduled, queued, deferred, held, submitting, ambiguous).', labelNames: ['region', 'state'], registers,
    collect: async function collect(this: Gauge) {
      this.reset();
      const db = sources.database;
      if (!db) return;
      await safely('svc_queue_recipients', async () => {
        for (const row of await opsGaugesRepo(db.database.db).queueDepth()) this.set({ region: row.region, state: row.state }, row.count);
      });
    },
  });
  new Gauge({
    name: 'svc_webhook_messages', help: 'Webhook messages not yet finished, by status (pending, delivering) and whether their time has come (due).', labelNames: ['status', 'due'], registers,
    collect: async function collect(this: Gauge) {
      this.reset();
      const db = sources.database;
      if (!db) return;
      await safely('svc_webhook_messages', async () => {
        for (const row of await opsGaugesRepo(db.database.db).webhookBacklog(db.clock.now().toISOString())) {
          this.set({ status: row.status, due: 'yes' }, row.due);
          this.set({ status: row.status, due: 'no' }, row.count - row.due);
        }
      });
    },
  });
  new Gauge({
    name: 'svc_sqlite_file_bytes', help: 'Size of the SQLite database file and of its WAL.', labelNames: ['file'], registers,
    collect: function collect(this: Gauge) {
      this.reset();
      const sizes = sources.database?.database.fileSizes();
      if (!sizes) return;
      this.set({ file: 'database' }, sizes.database);
      this.set({ file: 'wal' }, sizes.wal);
    },
  });
  new Gauge({
    name: 'svc_inbound_sessions', help: 'Inbound SMTP sessions open now.', registers,
    collect: function collect(this: Gauge) { if (sources.inbound) this.set(sources.inbound.sessions()); },
  });
  new Gauge({
    name: 'svc_inbound_inflight_bytes', help: 'Bytes of inbound messages held in memory now (against smtp_inflight_bytes_limit).', registers,
    collect: function collect(this: Gauge) { if (sources.inbound) this.set(sources.inbound.inflightBytes()); },
  });
  new Gauge({
    name: 'svc_outbound_inflight', help: 'Outbound deliveries in progress, by region.', labelNames: ['region'], registers,
    collect: function collect(this: Gauge) {
      for (const queue of sources.outbound ?? []) this.set({ region: queue.region.name }, queue.inFlight);
    },
  });
  new Gauge({
    name: 'svc_metrics_peer_processes', help: 'Other svc processes whose shared figures this scrape includes.', registers,
    collect: function collect(this: Gauge) { this.set(sources.peers); },
  });
  return sources;
}
