import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../../config/schema.js';
import { servedRegions } from './served-regions.js';
import type { RegionName } from '../../core/regions.js';
import { suppressionsRepo } from '../../core/suppressions/index.js';
import { emailsRepo } from '../../storage/repos/index.js';
import { destinationSlots, subscribeWake } from '../../storage/redis/index.js';
import { QueueClaims } from '../../mta/outbound/claims.js';
import { messageBuilder } from '../../mta/outbound/signing-pool.js';
import { messageCache, type OutboundTracking } from '../../mta/outbound/messages.js';
import { RegionQueue } from '../../mta/outbound/queue.js';
import { routeFinder } from '../../mta/outbound/routes.js';
import { SessionPool } from '../../mta/outbound/session-pool.js';
import { mtaStsPolicies } from '../../mta/outbound/mta-sts.js';
import { tlsReportCounter } from '../../mta/outbound/tls-report-counter.js';
import { mtaStsPolicyFetcher, trustedCas } from '../../net/outbound-tls.js';
import type { Services } from '../services.js';

export interface OutboundRole {
  name: 'outbound';
  /** This process's node id: the owner of the recipients it claims (`lease_owner`). */
  node: string;
  queues: RegionQueue[];
  /** Writes the TLS-RPT session counts held in memory now (tests; otherwise every 30 s and at stop). */
  flushTlsReport(): Promise<void>;
  /** Looks at every queue now (tests move their clock, then poke). */
  poke(): void;
  stop(): Promise<void>;
}

/**
 * svc's own MTA: one queue per region served by this process (`outbound_regions`, every region by
 * default). Each region connects with its own EHLO name and source address. Several processes
 * (on this box or others sharing the database and Redis) may serve one region: each claims
 * recipients under a lease with its own node id. Submissions a dead process left half-done (their
 * lease lapsed) are made ambiguous, never resent: at start and on every lease tick. `localTrace`:
 * this process serves the admin socket too, so attempts reach `svc admin trace` without Redis.
 */
export interface OutboundOptions {
  localTrace?: boolean;
  /** The process's data folder lock (`token`) and the holders of its outbound locks it took over (processes that died). */
  lock?: { token: string; replaced: readonly { name: string; pid: number; token: string }[] };
}

/** An outbound process's node id: its host, pid and data folder lock, so a successor on the folder can name a dead one's. */
export const outboundNodeId = (host: string, pid: number, lockToken: string) => `${host}/${pid}/${lockToken.slice(0, 8)}`;

export async function startOutboundRole(services: Services, config: Config, options: OutboundOptions = {}): Promise<OutboundRole> {
  const names = servedRegions(config);
  const { database, clock, logger } = services;
  const recorder = services.sending.recorder;
  // New at every start: a restarted process must not take its predecessor's leases for its own.
  const node = outboundNodeId(hostname(), process.pid, options.lock?.token ?? randomBytes(4).toString('hex'));
  // Outbound processes of this folder that died (their locks were taken over): no need to wait
  // for their leases to lapse. Only on this host: a node elsewhere is never named here.
  const dead = (options.lock?.replaced ?? []).filter((h) => h.name.startsWith('outbound-')).map((h) => outboundNodeId(hostname(), h.pid, h.token));
  const leaseMs = config.outbound_lease_s * 1000;
  // On SQLite with one place a region (outbound_processes 1) the data folder's lock makes this the
  // region's only process: its own count is the whole limit, and the two Redis calls a delivery
  // made for a shared slot (a tenth of the main thread) are left out.
  const alone = database.kind === 'sqlite' && config.outbound_processes === 1;
  const claims = new QueueClaims({ db: database.db, clock, logger, node, leaseMs, slots: alone ? undefined : destinationSlots(services.redis) });
  await recorder.recoverInterrupted(names, node, dead);
  await claims.forgetDead(names, dead);
  // svc admin trace: straight to this process's admin socket, or through Redis to the api process's.
  const trace = services.sending.traces.sink(!!options.localTrace);
  const builder = messageBuilder(config.outbound_sign_threads >= 0 ? config.outbound_sign_threads : undefined);
  const messageFor = messageCache({ emails: emailsRepo(database.db), domains: services.sending.domains, builder, clock, tracking: outboundTracking(services, config) });
  const route = routeFinder(services.deliveryResolver, {
    relay: config.outbound_relay, port: config.outbound_port, maxTargets: 6, memoMs: Math.min(config.dns_cache_ttl_s, 10) * 1000,
  });
  const ca = trustedCas(config.outbound_tls_ca_file);
  // A smarthost is trusted to relay: recipients' MTA-STS policies are its business then.
  const mtaSts = config.mta_sts_enabled && !config.outbound_relay ? mtaStsPolicies({
    db: database.db, resolver: services.deliveryResolver, clock, logger, memoMs: Math.min(config.dns_cache_ttl_s, 10) * 1000,
    fetch: mtaStsPolicyFetcher({ resolver: services.deliveryResolver, allowPrivate: config.mta_sts_allow_private, port: config.mta_sts_policy_port, ca, timeoutMs: 60_000 }),
  }) : undefined;
  const tlsReport = mtaSts ? tlsReportCounter({ db: database.db, clock, logger, flushMs: 30_000 }) : undefined;
  const queues = names.map((name) => {
    const region = services.regions(name);
    const pool = new SessionPool(
      { ehloName: region.ehloName, localAddress: region.sourceAddress, connectTimeoutMs: config.outbound_connect_timeout_s * 1000, replyTimeoutMs: config.outbound_reply_timeout_s * 1000,
        transactionTimeoutMs: config.outbound_transaction_timeout_s * 1000, ca },
      { idleMs: 30_000, maxMessagesPerSession: 500 },
    );
    return {
      pool,
      queue: new RegionQueue(region, {
        db: database.db, clock, logger, recorder, suppressions: suppressionsRepo(database.db), messageFor, route, pool, returnPaths: services.sending.returnPaths,
        simulatorDomain: config.mailbox_simulator_domain.toLowerCase(), pollMs: config.outbound_poll_s * 1000, wake: services.sending.wake,
        metrics: services.metrics, trace, mtaSts, tlsReport, claims, leaseTickMs: Math.max(500, Math.floor(leaseMs / 3)),
      }),
    };
  });
  const byRegion = new Map(queues.map((q) => [q.queue.region.name as string, q.queue]));
  const subscription = await subscribeWake(services.redis, names, (region) => byRegion.get(region)?.wake());
  for (const { queue } of queues) queue.wake();
  logger.info({ regions: names, node, leaseS: config.outbound_lease_s }, 'outbound queues started');
  return {
    name: 'outbound',
    node,
    queues: queues.map((q) => q.queue),
    poke: () => { for (const { queue } of queues) queue.wake(); },
    flushTlsReport: async () => { await tlsReport?.flush(); },
    async stop() {
      await subscription.stop();
      await Promise.all(queues.map((q) => q.queue.stop(20_000)));
      for (const q of queues) q.pool.closeAll();
      await tlsReport?.stop();
      await builder.close();
    },
  };
}

/**
 * Where tracked messages' links point: the domain's tracking host over https (its CNAME leads
 * here), or the API's link base (`tracking_links: link_base`). Without a link base a message goes
 * out untracked rather than with links nothing answers.
 */
function outboundTracking(services: Services, config: Config): OutboundTracking {
  let warned = false;
  return {
    key: services.secretBox.derive('tracking v1'),
    baseFor(domain) {
      if (config.tracking_links !== 'link_base') return `https://${domain.trackingHost}`;
      try {
        return services.linkBase.url();
      } catch (err) {
        if (!warned) services.logger.warn({ reason: (err as Error).message }, 'tracked mail goes out untracked until public_base_url is set');
        warned = true;
        return undefined;
      }
    },
  };
}
