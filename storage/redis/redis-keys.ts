// Every Redis key svc uses, in one place. Redis holds only what SQLite can rebuild.

const PREFIX = 'svc:';

export const redisKeys = {
  /** Token bucket of a team's API rate limit (hash: t = tokens, ts = last refill ms). */
  rateBucket: (teamId: string) => `${PREFIX}rate:${teamId}`,
  /** Token bucket of one client address on the public routes (same hash; team ids are UUIDs). */
  clientRateBucket: (client: string) => `${PREFIX}rate:client:${client}`,
  /** Token bucket of one client address's failed SMTP submission logins (same hash). */
  smtpAuthFailureBucket: (client: string) => `${PREFIX}rate:smtp-auth:${client}`,
  /** Marker of an idempotent send in flight (value: request hash; expires on its own). */
  idempotencyInFlight: (teamId: string, keyDigest: string) => `${PREFIX}idem:${teamId}:${keyDigest}`,
  /** Pub/sub channel: mail is due now in this region's outbound queue. */
  outboundWake: (region: string) => `${PREFIX}outbound:wake:${region}`,
  /** Pub/sub channel: durable work was added (runs enrolled, an import queued); the jobs role's runner looks at once. */
  workWake: `${PREFIX}work:wake`,
  /** Connection slots of one destination (recipient domain) of a region, across outbound processes (zset: holder → lapse ms). */
  destinationSlots: (region: string, domain: string) => `${PREFIX}outbound:slots:${region}:${domain}`,
  /** Pub/sub channel: each delivery attempt of an outbound process without the api role (svc admin trace). */
  attemptTrace: `${PREFIX}outbound:attempts`,
  /** Lock held by the instance running a scheduled job. */
  jobLock: (job: string) => `${PREFIX}lock:job:${job}`,
  /** Mark of one scheduled run of a job (its cron tick), taken by the one instance that runs it. */
  jobRun: (job: string, tick: string) => `${PREFIX}lock:job-run:${job}:${tick}`,
  /** Cached DNS answer for delivery lookups (JSON; expires with the cache TTL). */
  dnsCache: (kind: string, name: string) => `${PREFIX}dns:${kind}:${name}`,
  /** The /metrics figures of processes without the api role (hash: process → {at, metrics JSON}). */
  opsMetricsSnapshots: `${PREFIX}ops-metrics`,
} as const;
