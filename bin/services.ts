import type { Logger as PinoLogger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Database } from '../storage/sql/index.js';
import type { RedisClient } from '../storage/redis/index.js';
import { apiKeysRepo, authGenerationReader } from '../storage/repos/index.js';
import { CachedKeyLookup } from '../core/api-keys/index.js';
import { requestLogsRepo } from '../storage/repos/index.js';
import { teamsRepo } from '../storage/repos/index.js';
import { authenticate, type Permission } from '../core/api-keys/index.js';
import { apiKeysService } from '../core/api-keys/index.js';
import type { Clock } from '../core/clock.js';
import { checkReadiness, type Probe } from '../core/health.js';
import { rateLimiter } from '../core/rate-limit.js';
import { linkBase, type LinkBase } from '../core/link-base.js';
import { requestLogsService } from '../core/request-logs/index.js';
import { RequestLogWriter } from '../core/request-logs/index.js';
import { brandKitUploads, membersService, planCatalog, sendAllowance, teamService, teamsService, type PlanCatalog, type TeamService } from '../core/team/index.js';
import type { ApiDeps, AudienceServices, FoundationServices, SendingServices } from '../api/deps.js';
import { savedBlocksService, templateSends, templatesService } from '../core/templates/index.js';
import type { DnsResolver } from '../dns/resolver.js';
import type { SecretBox } from '../storage/files/index.js';
import { regionDirectory, type RegionDirectory } from '../core/regions.js';
import { regionNames } from '../core/regions.js';
import { domainLookup, domainsService, type DomainLookup, type DomainsDeps } from '../core/domains/index.js';
import { cachedResolver, memoizedResolver } from '../dns/cache.js';
import { redisDnsCacheStore, workWakePublisher } from '../storage/redis/index.js';
import { suppressionsRepo, suppressionsService, type SuppressionsRepo } from '../core/suppressions/index.js';
import { sendingArea, type Sending } from './sending.js';
import { receivingArea, type Receiving } from './receiving.js';
import { webhookDispatcher, webhooksService, type WebhookDispatcher } from '../core/webhooks/index.js';
import { webhookSender } from '../net/webhook-sender.js';
import { endpointUrlPolicy } from '../net/url-policy.js';
import { cloudflareClient } from '../net/cloudflare.js';
import { metricsRollup, metricsService, rollupWork, type MetricsRollup } from '../core/metrics/index.js';
import { durableWorker, type DurableWorker } from '../core/work/index.js';
import { backupService } from '../core/backup.js';
import { dnsSelfCheck } from '../dns/self-check.js';
import { tcpPortProbe } from '../net/port-probe.js';
import { consentHasher, contactPropertiesService, contactsService, planContactLimit, type ConsentHasher, type ContactLimitOf } from '../core/contacts/index.js';
import { topicsService } from '../core/topics/index.js';
import { preferencesService } from '../core/preferences/index.js';
import { explicitMembership, segmentsService } from '../core/segments/index.js';
import type { OpsMetrics } from '../core/ops-metrics.js';
import { contactImportsService, contactImportWork, threadedBatchReader, type ContactImportsService } from '../core/contact-imports/index.js';
import type { WorkHandler } from '../core/work/index.js';
import { importFiles, type ImportFiles } from '../storage/files/index.js';
import { join } from 'node:path';
import { trackingService } from '../core/tracking/index.js';
import { broadcastFanOut, broadcastsService, publishedTemplates } from '../core/broadcasts/index.js';
import { campaignSender, type CampaignSender } from '../core/emails/index.js';
import { campaignsArea } from './campaigns.js';

export interface ServicesInput {
  config: Config;
  database: Database;
  redis: RedisClient;
  logger: PinoLogger;
  probes: Probe[];
  version: string;
  clock: Clock;
  /** Uncached: what verification asks. */
  resolver: DnsResolver;
  secretBox: SecretBox;
  hostname: string;
  /** Where counters for the operator's /metrics go (bin/ops-metrics.ts). */
  metrics: OpsMetrics;
}

export interface Services {
  /** The core services by area: the HTTP layer's (inside `api`) and the jobs role's. */
  areas: Pick<ApiDeps, 'foundation' | 'audience' | 'content' | 'sending' | 'campaigns' | 'inbox'>;
  api: ApiDeps;
  logWriter: RequestLogWriter;
  database: Database;
  redis: RedisClient;
  repos: { teams: ReturnType<typeof teamsRepo>; apiKeys: ReturnType<typeof apiKeysRepo>; requestLogs: ReturnType<typeof requestLogsRepo>; suppressions: SuppressionsRepo };
  clock: Clock;
  logger: PinoLogger;
  resolver: DnsResolver;
  secretBox: SecretBox;
  regions: RegionDirectory;
  /** Read side of the domains area for sending and receiving. */
  domains: DomainLookup;
  /** Redis-cached resolver for delivery lookups (MX, A/AAAA); verification uses `resolver`. */
  deliveryResolver: DnsResolver;
  /** Where share and download links point; the api role tells it the port it bound. */
  linkBase: LinkBase;
  /** The sending side: the emails service (API) and what the outbound queues use. */
  sending: Sending;
  /** Delivers outbox events to webhook endpoints; the jobs role runs its loop. */
  webhookDispatcher: WebhookDispatcher;
  /** Folds outbox events into the metrics rollups (durable work of the jobs role; the API folds on demand). */
  metricsRollup: MetricsRollup;
  /** Long-running work in small committed steps under a lease; the jobs role runs it. */
  work: DurableWorker;
  /** The receiving side: the API service and what the inbound listener uses. */
  receiving: Receiving;
  /** The operator's plans (config `plans`). */
  plans: PlanCatalog;
  /** Counters for the operator's /metrics, handed to the listeners and queues. */
  metrics: OpsMetrics;
  /** Uploaded contact import files under the data folder (the jobs role deletes them a week after). */
  importFiles: ImportFiles;
}

/** Every repo and core service, built once from the open stores: one factory per area, composed here. */
export function applianceServices(input: ServicesInput): Services {
  const { config, database, redis, logger, clock } = input;
  const repos = { teams: teamsRepo(database.db), apiKeys: apiKeysRepo(database.db), requestLogs: requestLogsRepo(database.db), suppressions: suppressionsRepo(database.db) };
  const logWriter = new RequestLogWriter(repos.requestLogs, repos.apiKeys, logger, config.logs_flush_ms);
  const regions = regionDirectory(input.hostname, config.regions);
  const plans = planCatalog(config.plans);
  const allowance = sendAllowance(plans);
  const links = linkBase({ publicBaseUrl: config.public_base_url, httpHost: config.http_host, httpPort: config.http_port });
  const team = teamService({ db: database.db, clock, logger, plans, regions, aiConfigured: config.ai_provider_url !== '', allowance, linkBase: links.url });
  const domainsDeps = domainsDepsOf(input, regions, (teamId) => team.checkLimit(teamId, 'domain_limit'));
  const domains = domainLookup(domainsDeps);
  const deliveryResolver = cachedResolver(input.resolver, redisDnsCacheStore(redis), config.dns_cache_ttl_s);
  // Recipient checks (each send's, each broadcast recipient's) ask again and again for a few domains.
  const recipientResolver = memoizedResolver(deliveryResolver, {
    ttlMs: Math.min(config.dns_cache_ttl_s, 10) * 1000, maxEntries: 10_000, now: () => performance.now(),
  });
  const webhookDispatcher = webhookDispatcherOf(input);
  // Recipient checks ask DNS through the delivery cache; attachment fetches judge addresses uncached.
  // One keyed hash of addresses for the consent trail, shared by the API and audience from sends.
  const consentHash = consentHasher(input.secretBox.derive('consent v1'));
  const sending = sendingArea({ config, database, redis, logger, clock, resolver: recipientResolver, uncachedResolver: input.resolver, secretBox: input.secretBox, regions, domains, linkBase: links.url, allowance, consentHash });
  const receiving = receivingArea({
    config, database, logger, clock, secretBox: input.secretBox, domains, hostname: input.hostname,
    returnPaths: (address) => sending.returnPaths.check(address, clock.now()), recorder: sending.recorder, linkBase: links.url,
  });
  const rollup = metricsRollup({ db: database.db, batchSize: config.metrics_rollup_batch_size });
  const contactLimit = contactLimitOf(input, team);
  const imports = contactImportsParts(input, consentHash, contactLimit);
  const audience = audienceServices(input, team, links.url, consentHash, contactLimit);
  const campaign = campaignSenderOf(input, recipientResolver, domains, regions, allowance, sending.wake);
  const content = {
    templates: templatesService({ db: database.db, clock, logger }), templateSends: templateSends({ db: database.db }),
    savedBlocks: savedBlocksService({ db: database.db, clock, logger }),
  };
  const broadcastTemplates = publishedTemplates(content.templateSends);
  const wakeWork = workWakePublisher(redis);
  const campaigns = campaignsArea({
    config, db: database.db, clock, logger, emails: sending.emails, preferences: audience.preferences, consentHash, contactLimit,
    templateSends: content.templateSends, wakeWork,
  });
  const work = durableWorker({
    db: database.db, clock, logger, leaseMs: config.work_lease_ms, concurrency: config.work_concurrency, stepsPerTurn: 50, wake: wakeWork,
    handlers: [
      rollupWork(rollup, config.metrics_rollup_interval_ms),
      imports.handler,
      broadcastFanOut({
        db: database.db, clock, logger, campaign, linksFor: (c, broadcastId) => audience.preferences.linksFor(c, broadcastId), templates: broadcastTemplates,
        pageSize: config.broadcasts_page_size, wake: sending.wake,
      }),
      ...campaigns.handlers,
    ],
  });
  const areas: Services['areas'] = {
    foundation: foundationServices(input, repos, domains, receiving.spool.dir, plans),
    audience: { ...audience, contactImports: imports.service(work) },
    content,
    sending: sendingServices(input, { sending, domainsDeps, rollup, team, wakeDispatcher: () => webhookDispatcher.wakes.wake() }),
    campaigns: {
      ...campaigns.services,
      broadcasts: broadcastsService({
        db: database.db, clock, logger, campaign, templates: broadcastTemplates, marketingPaused: () => config.marketing_sends_paused,
      }),
    },
    inbox: { receiving: receiving.service },
  };
  const api: ApiDeps = { ...contractParts(input, repos.apiKeys, logWriter), ...areas };
  return {
    areas, api, logWriter, database, redis, repos, clock, logger, resolver: input.resolver, secretBox: input.secretBox, regions,
    webhookDispatcher, sending, domains, deliveryResolver, linkBase: links, receiving, metricsRollup: rollup, work, plans, metrics: input.metrics,
    importFiles: imports.files,
  };
}

type Repos = Services['repos'];

/** The contract layer's own parts: identity, authentication, rate limits, readiness. */
function contractParts(input: ServicesInput, keys: Repos['apiKeys'], logWriter: RequestLogWriter) {
  const { config, redis, logger } = input;
  const identity = { version: input.version, env: config.env };
  const keyLookup = new CachedKeyLookup(keys, authGenerationReader(input.database));
  return {
    ...identity, clock: input.clock, logger, logWriter,
    bodyLimitBytes: config.http_body_limit_mb * 1024 * 1024,
    trustProxy: config.http_trust_proxy,
    authenticate: (header: string | undefined, needed: Permission, scope: string | null) => authenticate(keyLookup, header, needed, scope),
    rateLimit: rateLimiter(redis, { capacity: config.rate_limit_burst, refillPerSecond: config.rate_limit_per_second }, logger),
    publicRateLimit: rateLimiter(redis, { capacity: config.public_rate_limit_burst, refillPerSecond: config.public_rate_limit_per_second }, logger, 'client'),
    readiness: () => checkReadiness(input.probes, identity, 2000),
  };
}

function foundationServices(input: ServicesInput, repos: Repos, domains: DomainLookup, spoolDir: string, plans: PlanCatalog): FoundationServices {
  const { config, database, clock, logger } = input;
  return {
    apiKeys: apiKeysService({ repo: repos.apiKeys, clock, isVerifiedDomain: (teamId, domainId) => domains.isVerifiedDomain(teamId, domainId) }),
    teams: teamsService({ db: database.db, clock, logger, plans }),
    requestLogs: requestLogsService(repos.requestLogs),
    backup: backupService({ database, spoolDir, dataDir: config.data_dir, clock, logger }),
    checkDns: dnsSelfCheck({
      resolver: input.resolver, hostname: input.hostname, probe: tcpPortProbe(input.resolver),
      regions: regionNames.map(regionDirectory(input.hostname, config.regions)),
    }),
  };
}

function audienceServices(input: ServicesInput, team: TeamService, links: () => string, consentHash: ConsentHasher, contactLimit: ContactLimitOf): Omit<AudienceServices, 'contactImports'> {
  const { config, database, clock, logger } = input;
  return {
    suppressions: suppressionsService({ db: database.db, clock }),
    team,
    members: membersService({ db: database.db, clock, logger }),
    contacts: contactsService({
      db: database.db, clock, hash: consentHash, contactLimit,
    }),
    contactProperties: contactPropertiesService({ db: database.db, clock }),
    topics: topicsService({ db: database.db, clock }),
    segments: segmentsService({ db: database.db, clock }),
    brandKitUploads: brandKitUploads({ db: database.db, clock, logger, linkBase: links }),
    preferences: preferencesService({ db: database.db, clock, logger, secretBox: input.secretBox, hash: consentHash, linkBase: links }),
  };
}

function contactLimitOf(input: ServicesInput, team: TeamService) {
  return planContactLimit(async (db, teamId) => (await team.planIn(db, teamId)).limits.contacts, input.config.contacts_limit);
}

interface SendingParts {
  team: TeamService;
  sending: Sending;
  domainsDeps: DomainsDeps;
  rollup: MetricsRollup;
  wakeDispatcher(): void;
}

function sendingServices(input: ServicesInput, parts: SendingParts): SendingServices {
  const { config, database, clock, logger } = input;
  return {
    emails: parts.sending.emails,
    shares: parts.sending.shares,
    queue: parts.sending.queueAdmin,
    traces: parts.sending.traces.hub,
    tracking: trackingService({ db: database.db, clock, logger, key: input.secretBox.derive('tracking v1'), flushMs: config.tracking_flush_ms }),
    domains: domainsService(parts.domainsDeps),
    metrics: metricsService({ db: database.db, clock, logger, rollup: parts.rollup, catchUpEvents: config.metrics_query_catch_up_events }),
    webhooks: webhooksService({
      db: database.db, clock, secretBox: input.secretBox, checkEndpointUrl: endpointUrlPolicy(input.resolver, config.webhooks_allow_private),
      logger, wake: parts.wakeDispatcher, checkEndpointLimit: (teamId) => parts.team.checkLimit(teamId, 'webhook_endpoint_limit'),
    }),
  };
}

/** Campaign sends through the ordinary send path (core/emails/campaign.ts): broadcasts now, automations next. */
function campaignSenderOf(
  input: ServicesInput, resolver: DnsResolver, domains: DomainLookup, regions: RegionDirectory, allowance: ReturnType<typeof sendAllowance>, wake: (region: string) => void,
): CampaignSender {
  return campaignSender({
    db: input.database.db, domains, regions, resolver, simulatorDomain: input.config.mailbox_simulator_domain.toLowerCase(), allowance, wake,
  });
}

function domainsDepsOf(input: ServicesInput, regions: RegionDirectory, checkDomainLimit: DomainsDeps['checkDomainLimit']): DomainsDeps {
  const { config } = input;
  return {
    db: input.database.db, resolver: input.resolver, regions, secretBox: input.secretBox, clock: input.clock, logger: input.logger,
    mailFromRecords: config.mail_from_records as DomainsDeps['mailFromRecords'],
    verifyWindowHours: config.domains_verify_window_hours, dkimGraceHours: config.dkim_rotation_grace_hours,
    cloudflare: (token) => cloudflareClient(config.cloudflare_api_url, token),
    checkDomainLimit,
  };
}

function webhookDispatcherOf(input: ServicesInput): WebhookDispatcher {
  const { config } = input;
  return webhookDispatcher({
    db: input.database.db, clock: input.clock, secretBox: input.secretBox, logger: input.logger,
    sender: webhookSender({ resolver: input.resolver, allowPrivate: config.webhooks_allow_private, timeoutMs: config.webhooks_timeout_ms }),
    options: { concurrencyPerEndpoint: config.webhooks_endpoint_concurrency, timeoutMs: config.webhooks_timeout_ms },
    metrics: input.metrics,
  });
}

/**
 * Rows an import step writes in one transaction. Each step has fixed costs (the import's row, the
 * declared properties, the count, the commit); 4,000 rows instead of 2,000 took a million-row
 * import from about 29,000 to 32,000 rows/s. The step holds the database's write lock for about
 * 130 ms, which an API send waiting for it sees while an import runs.
 */
const IMPORT_BATCH_ROWS = 4000;

/**
 * Contact imports: the files under the data folder, the durable work handler that processes the
 * rows, and the API service (built once the worker it enqueues on exists).
 */
function contactImportsParts(input: ServicesInput, consentHash: ConsentHasher, contactLimit: ContactLimitOf): {
  files: ImportFiles; handler: WorkHandler<any, any>; service(work: DurableWorker): ContactImportsService;
} {
  const { config, database, clock, logger } = input;
  const files = importFiles(join(config.data_dir, 'imports'));
  const segments = explicitMembership(database.db);
  const handler = contactImportWork({
    db: database.db, clock, logger, reader: threadedBatchReader(files.dir), hash: consentHash, contactLimit, segments,
    batchRows: IMPORT_BATCH_ROWS, batchBytes: 4 * 1024 * 1024,
  });
  const service = (work: DurableWorker) => contactImportsService({ db: database.db, clock, logger, files, work, contactLimit, segments });
  return { files, handler, service };
}
