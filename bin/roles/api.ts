import type { Logger as PinoLogger } from 'pino';
import type { Config } from '../../config/schema.js';
import { adminSocketPath } from '../../config/paths.js';
import { httpApp } from '../../api/app.js';
import { trackingFront } from '../../api/public/tracking.js';
import { adminRouter } from '../../api/admin/router.js';
import { listenSocket, listenTcp, type Listening } from '../../api/server.js';
import { lockHolders, type LockHolder } from '../../storage/files/index.js';
import type { AdminProcess } from '../../api/admin/router.js';
import { metricsApp, type MetricsExposition } from '../../api/metrics.js';
import type { Services } from '../services.js';

export interface ApiRole {
  name: 'api';
  http: Listening;
  admin: Listening;
  /** The `ops_metrics_port` listener, when one is configured. */
  metrics?: Listening;
  stop(): Promise<void>;
}

/**
 * The HTTP API on its TCP port, and the same stack plus /admin on the operator socket. `roles`:
 * every role this process runs, for the status.
 */
export async function startApiRole(services: Services, config: Config, logger: PinoLogger, metrics: MetricsExposition, roles: readonly string[] = ['api']): Promise<ApiRole> {
  const startedAt = Date.now();
  // The tracking routes are answered before express (api/public/tracking.ts).
  const front = trackingFront(services.api.sending.tracking, httpApp(services.api), { trustProxy: config.http_trust_proxy });
  const http = await listenTcp(front, config.http_host, config.http_port);
  services.linkBase.listening(http.port!);
  const adminApp = httpApp(services.api, {
    admin: adminRouter(services.api, () => ({
      version: services.api.version, env: services.api.env, pid: process.pid,
      uptime_s: Math.round((Date.now() - startedAt) / 1000), roles: [...roles], data_dir: config.data_dir,
      processes: processesOf(lockHolders(config.data_dir)),
    })),
    metrics,
  });
  const admin = await listenSocket(adminApp, adminSocketPath(config));
  const metricsListener = config.ops_metrics_port > 0 ? await listenTcp(metricsApp(metrics), config.ops_metrics_host, config.ops_metrics_port) : undefined;
  logger.info({ http: http.address, admin: admin.address, metrics: metricsListener?.address ?? null }, 'api listening');
  warnWithoutLinkBase(services, logger);
  return {
    name: 'api', http, admin, metrics: metricsListener,
    async stop() {
      // Live traces are streams that never end by themselves: ended first, so the socket closes at once.
      services.api.sending.traces.endAll();
      await Promise.all([http.close(), admin.close(), metricsListener?.close()]);
      // Hits answered before the listener closed are committed before the process goes.
      await services.api.sending.tracking.flush();
    },
  };
}

/**
 * Every svc process on this data folder, from the locks each holds while it runs (one per role,
 * outbound region and private Redis; a lock whose process is gone is not listed): under systemd,
 * each unit's process.
 */
function processesOf(holders: readonly LockHolder[]): AdminProcess[] {
  const byProcess = new Map<string, AdminProcess>();
  for (const h of holders) {
    if (byProcess.has(h.token)) continue;
    byProcess.set(h.token, {
      pid: h.pid, roles: h.roles, regions: h.regions, version: h.version, started_at: h.started_at,
      private_redis: holders.some((o) => o.token === h.token && o.name === 'redis'), this_process: h.pid === process.pid,
    });
  }
  return [...byProcess.values()].sort((a, b) => a.started_at.localeCompare(b.started_at));
}

/** Said once at start rather than only in each refused request (503). */
function warnWithoutLinkBase(services: Services, logger: PinoLogger): void {
  try {
    services.linkBase.url();
  } catch (err) {
    logger.warn({ reason: (err as Error).message }, 'share and download links refused until public_base_url is set');
  }
}

export { adminSocketPath };
