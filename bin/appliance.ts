import { hostname } from 'node:os';
import { createResolver } from '../dns/resolver.js';
import { openSecretBox } from '../storage/files/index.js';
import { join } from 'node:path';
import type { Logger as PinoLogger } from 'pino';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load.js';
import { fqdnProblem } from '../config/hostname.js';
import { openDatabase, SQLITE_PAGE_BYTES, type Database } from '../storage/sql/index.js';
import { connectRedis, type RedisClient } from '../storage/redis/index.js';
import { startPrivateRedis, type PrivateRedis } from '../storage/redis/index.js';
import { clamdClient, parseClamdTarget, pingClamd } from '../scanner/clamd.js';
import { systemClock, type Clock } from '../core/clock.js';
import { storageProbe, type Probe } from '../core/health.js';
import { freeBytes } from '../storage/files/index.js';
import { makePrivateDir, lockDataFolder, FolderInUseError, type FolderLock, type LockHolder } from '../storage/files/index.js';
import { applianceServices, type Services } from './services.js';
import { chooseClamd } from './scanner-choice.js';
import { servedRegions } from './roles/served-regions.js';
import type { MetricsExposition } from '../api/metrics.js';
import type { InboundRole } from './roles/inbound.js';
import type { OutboundRole } from './roles/outbound.js';
import { opsRegistry, roleLabel, type OpsRegistry } from './ops-metrics.js';
import { opsExposition, shareOpsMetrics } from './ops-exposition.js';

import { outboundPlaces, roles, type Role } from './role-names.js';

export { roles, type Role };

export interface RunningRole {
  name: Role;
  /** What the role reads again on SIGHUP (the inbound role: its TLS certificate). */
  reload?(): Promise<void>;
  stop(): Promise<void>;
}

export interface Appliance {
  services: Services;
  running: RunningRole[];
  /** SIGHUP: each role reads again what it can take without a restart. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  roles: readonly Role[];
  logger: PinoLogger;
  version: string;
  clock?: Clock;
  /** The machine's host name, used when mail_hostname is empty (tests give their own). */
  systemHostname?: string;
}

/** Opens the stores, builds the services once, starts the asked roles; stop() undoes it in reverse. */
export async function startAppliance(options: StartOptions): Promise<Appliance> {
  // A failed start undoes what it opened: a private redis-server or a Redis connection left
  // behind would keep the process alive after its one error line (and orphan the child).
  const opened: (() => unknown)[] = [];
  try {
    return await startOpening(options, opened);
  } catch (err) {
    for (const undo of opened.reverse()) await Promise.resolve().then(undo).catch(() => undefined);
    throw err;
  }
}

async function startOpening(options: StartOptions, opened: (() => unknown)[]): Promise<Appliance> {
  const { config, logger } = options;
  const mailHostname = effectiveMailHostname(config, options.systemHostname ?? hostname());
  makePrivateDir(config.data_dir);
  // Before anything is started or removed (the private Redis replaces redis.sock, the api role
  // admin.sock): a second copy of a role on this folder stops here, harming nothing.
  const lock = lockFolder(config, options);
  opened.push(() => lock.release());
  const privateRedis = await maybeStartPrivateRedis(config, logger);
  if (privateRedis) opened.push(() => privateRedis.stop());
  const redis = await connectRedis({ url: privateRedis?.url ?? config.redis_url, commandTimeoutMs: config.redis_command_timeout_ms });
  opened.push(() => redis.disconnect());
  const database = await openDatabase({
    url: config.database_url, path: join(config.data_dir, 'svc.sqlite'), synchronous: config.sqlite_synchronous as 'FULL' | 'NORMAL',
  });
  opened.push(() => database.close());
  if (database.kind === 'sqlite') noteSmallPages(database.sqlite.pragma('page_size', { simple: true }), logger);
  const scanning = { ...config, scanner_clamd: await chooseClamd(config.scanner_clamd, logger) };
  const probes = await readinessProbes(scanning, database, redis);
  const ops = opsRegistry({ role: roleLabel(options.roles, roles, config.outbound_regions), domainLabels: config.ops_metrics_domain_labels, logger });
  const services = applianceServices({
    config: scanning, database, redis, logger, probes, version: options.version, clock: options.clock ?? systemClock,
    resolver: buildResolver(config),
    secretBox: openSecretBox(config.secret_key_file || join(config.data_dir, 'secret.key')),
    hostname: mailHostname,
    metrics: ops.port,
  });
  const running: RunningRole[] = [];
  opened.push(() => services.webhookDispatcher.stop());
  const serving = options.roles.includes('api');
  if (serving) ops.watchDatabase(database, services.clock);
  const exposition = opsExposition(ops, redis, logger);
  for (const role of options.roles) {
    const started = await startRole(role, services, options, mailHostname, exposition, lock);
    watchRole(ops, started);
    running.push(started);
    opened.push(() => started.stop());
  }
  const sharing = serving ? undefined : shareOpsMetrics(ops, redis, logger);
  if (sharing) opened.push(() => sharing.stop());
  logger.info({ roles: options.roles, dataDir: config.data_dir, redis: privateRedis ? 'private' : 'url', database: database.kind }, 'svc started');
  return {
    services,
    running,
    async reload() {
      logger.info({ roles: options.roles }, 'reload asked');
      for (const role of running) await role.reload?.();
    },
    async stop() {
      // All at once: every listener stops taking connections at the same moment (the API must not
      // keep accepting while another role drains), and the drains share one stop budget.
      await Promise.all(running.map((role) => role.stop()));
      await sharing?.stop();
      await services.webhookDispatcher.stop();
      await services.logWriter.flush();
      redis.disconnect();
      await database.close();
      await privateRedis?.stop();
      lock.release();
      logger.info({}, 'svc stopped');
    },
  };
}

async function startRole(role: Role, services: Services, options: StartOptions, mailHostname: string, metrics: MetricsExposition, lock: FolderLock): Promise<RunningRole> {
  // Each role's modules load only in a process that runs it: an outbound or jobs process starts
  // without the HTTP stack, an API process without the MTA.
  switch (role) {
    case 'api': {
      const { startApiRole } = await import('./roles/api.js');
      return startApiRole(services, options.config, options.logger, metrics, options.roles);
    }
    case 'jobs': {
      const { startJobsRole } = await import('./roles/jobs.js');
      return startJobsRole(services, options.config, mailHostname);
    }
    case 'inbound': {
      const [{ startInboundRole }, { reportHandler }] = await Promise.all([import('./roles/inbound.js'), import('../mta/inbound/reports.js')]);
      return startInboundRole(services, options.config, options.logger, mailHostname, reportHandler(services.receiving.feedback));
    }
    case 'outbound': {
      const { startOutboundRole } = await import('./roles/outbound.js');
      return startOutboundRole(services, options.config, { localTrace: options.roles.includes('api'), lock });
    }
  }
}

/**
 * mail_hostname (checked by the loader), or the machine's name, which must then be fully qualified
 * as well: a bare `vm` would be the EHLO name and every domain's record target.
 */
function effectiveMailHostname(config: Config, system: string): string {
  if (config.mail_hostname) return config.mail_hostname;
  const problem = fqdnProblem(system);
  if (!problem) return system;
  throw new ConfigError('SVC_MAIL_HOSTNAME', `is empty and this machine's host name "${system}" is ${problem}; set mail_hostname to this host's public DNS name, like mail.example.com`);
}

/**
 * One lock per role, per outbound region (so svc-outbound@all and svc-outbound@<region> exclude
 * each other) and for the private Redis, which lives at <data_dir>/redis.sock: the systemd units
 * share the folder, each holding its own, while two copies of one of them cannot.
 */
function lockFolder(config: Config, options: StartOptions) {
  const regions = options.roles.includes('outbound') ? servedRegions(config) : [];
  const names: (string | string[])[] = options.roles.flatMap((role) => (role === 'outbound' ? regions.map((r) => outboundPlaces(r, config.outbound_processes)) : [role]));
  if (!config.redis_url) names.push('redis');
  try {
    return lockDataFolder(config.data_dir, names, { roles: options.roles, regions, version: options.version });
  } catch (err) {
    if (err instanceof FolderInUseError) throw new Error(inUse(err.dataDir, err.holder, config.outbound_processes));
    throw err;
  }
}

function inUse(dataDir: string, holder: LockHolder, processes: number): string {
  const who = `svc pid ${holder.pid} (roles ${holder.roles.join(', ')}, since ${holder.started_at})`;
  if (holder.name === 'redis') {
    return `data folder ${dataDir} is in use: ${who} runs its private Redis; stop that svc first, or give every process one Redis with SVC_REDIS_URL`;
  }
  if (holder.name.startsWith('outbound-')) {
    const region = holder.regions.find((r) => holder.name === `outbound-${r}` || holder.name.startsWith(`outbound-${r}-`)) ?? holder.name.slice('outbound-'.length);
    const all = processes === 1 ? 'outbound_processes is 1' : `all ${processes} places of outbound_processes are taken`;
    return `data folder ${dataDir} is in use: ${who} already runs the outbound role for ${region} there (${all}); stop it first`;
  }
  return `data folder ${dataDir} is in use: ${who} already runs the ${holder.name} role there; stop it first`;
}

/** A file an older svc made keeps its smaller pages until the operator rebuilds it (svc stopped). */
function noteSmallPages(pageBytes: unknown, logger: PinoLogger): void {
  if (Number(pageBytes) >= SQLITE_PAGE_BYTES) return;
  logger.info({ pageBytes, svcPageBytes: SQLITE_PAGE_BYTES }, 'the database file has smaller pages than svc makes; `svc db rebuild`, with svc stopped, rewrites it');
}

/** The listeners' own figures, read at scrape time. */
function watchRole(ops: OpsRegistry, role: RunningRole): void {
  if (role.name === 'inbound') ops.watchInbound((role as InboundRole).smtp);
  if (role.name === 'outbound') ops.watchOutbound((role as OutboundRole).queues);
}

function buildResolver(config: Config) {
  try {
    return createResolver({ servers: config.dns_servers, timeoutMs: config.dns_timeout_ms });
  } catch (err) {
    throw new ConfigError('dns_servers', (err as Error).message);
  }
}

async function maybeStartPrivateRedis(config: Config, logger: PinoLogger): Promise<PrivateRedis | undefined> {
  if (config.redis_url) return undefined;
  try {
    const redis = await startPrivateRedis({ bin: config.redis_server_bin, dir: config.data_dir, socket: join(config.data_dir, 'redis.sock') });
    logger.info({ url: redis.url }, 'private redis-server started');
    return redis;
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `${config.redis_server_bin} is not installed` : String((err as Error).message);
    throw new Error(`redis: no SVC_REDIS_URL is set and the private redis-server could not start (${reason})`);
  }
}

async function readinessProbes(config: Config, database: Database, redis: RedisClient): Promise<Probe[]> {
  const probes: Probe[] = [
    // Named after the database in use: 'sqlite', or 'postgres' when database_url names one.
    { name: database.kind, check: () => database.ping() },
    { name: 'redis', check: async () => { await redis.ping(); } },
    storageProbe(() => freeBytes(config.data_dir)),
  ];
  if (config.scanner_clamd) {
    const target = parseClamdTarget(config.scanner_clamd);
    probes.push({ name: 'clamd', check: async () => pingClamd(await clamdClient(target, 2000)) });
  }
  return probes;
}
