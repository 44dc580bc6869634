import type { Config } from '../config/schema.js';
import type { Database } from '../storage/sql/index.js';
import type { RedisClient } from '../storage/redis/index.js';
import { wakePublisher } from '../storage/redis/index.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { RegionDirectory } from '../core/regions.js';
import { emailsService, type EmailsService } from '../core/emails/index.js';
import { deliveryRecorder, type DeliveryRecorder } from '../core/emails/index.js';
import { emailShares, type EmailShares } from '../core/emails/index.js';
import { attachmentFetcher } from '../net/attachment-fetcher.js';
import { returnPaths, type ReturnPaths } from '../core/emails/index.js';
import { applianceFact } from '../storage/repos/index.js';
import { audienceFromSends, type ConsentHasher } from '../core/contacts/index.js';
import { templateSends } from '../core/templates/index.js';
import type { SendingDomains } from '../core/emails/index.js';
import type { SendAllowance } from '../core/team/index.js';
import type { DnsResolver } from '../dns/resolver.js';
import type { SecretBox } from '../storage/files/index.js';
import { queueAdmin, type QueueAdmin } from '../core/emails/index.js';
import { attemptTraces, type AttemptTraces } from './attempt-trace.js';

export interface SendingInput {
  config: Config;
  database: Database;
  redis: RedisClient;
  logger: Logger;
  clock: Clock;
  /** Cached (delivery) resolver: recipient checks. */
  resolver: DnsResolver;
  /** Uncached resolver: the address policy of attachment fetches. */
  uncachedResolver: DnsResolver;
  secretBox: SecretBox;
  regions: RegionDirectory;
  /** The domains area's read side (built once, shared with receiving). */
  domains: SendingDomains;
  /** Where share and download links point (core/link-base.ts). */
  linkBase: () => string;
  /** The consent trail's keyed hash of addresses (core/contacts). */
  consentHash: ConsentHasher;
  /** The team area's send allowance (daily and monthly caps, suspension). */
  allowance: SendAllowance;
}

export interface Sending {
  emails: EmailsService;
  domains: SendingDomains;
  /** Publishes "mail is due now" for a region's outbound queue. */
  wake(region: string): void;
  /**
   * Records delivery outcomes: the outbound queues' attempts, and the delivery reports
   * (record(recipientId, outcome, { report: true })) and complaints (recordComplaint) the inbound
   * side receives for a recipient its signed return path names.
   */
  recorder: DeliveryRecorder;
  /** Mints the signed return path of each recipient (outbound) and checks them (inbound). */
  returnPaths: ReturnPaths;
  /** Share links and sent attachments (signed downloads). */
  shares: EmailShares;
  /** The operator's queue tools (svc admin queue …). */
  queueAdmin: QueueAdmin;
  /** The live trace of delivery attempts (svc admin trace). */
  traces: AttemptTraces;
}

/** The sending side's core services, built once (the api role uses emails, outbound the rest). */
export function sendingArea(input: SendingInput): Sending {
  const { config, database, redis, logger, clock } = input;
  const { domains } = input;
  const wake = wakePublisher(redis);
  const emails = emailsService({
    db: database.db, redis, clock, logger, domains, regions: input.regions, resolver: input.resolver,
    simulatorDomain: config.mailbox_simulator_domain.toLowerCase(),
    maxAttachmentBytes: config.email_attachments_max_mb * 1024 * 1024,
    fetchAttachment: attachmentFetcher({ resolver: input.uncachedResolver, allowPrivate: config.email_attachments_allow_private, timeoutMs: 30_000 }),
    allowance: input.allowance,
    wake,
    templates: templateSends({ db: database.db }),
  });
  const recorder = deliveryRecorder({
    db: database.db, clock, logger, queueLifetimeMs: config.outbound_queue_lifetime_hours * 3600_000,
    audience: audienceFromSends(input.consentHash, { simulatorDomain: config.mailbox_simulator_domain }),
    retryJitter: { percent: config.outbound_retry_jitter_percent, random: Math.random },
  });
  const shares = emailShares({ db: database.db, clock, logger, secretBox: input.secretBox, linkBase: input.linkBase });
  const queue = queueAdmin({ db: database.db, clock, logger, recorder, wake });
  const traces = attemptTraces(redis, logger);
  return { emails, domains, wake, recorder, shares, returnPaths: signedReturnPaths(input), queueAdmin: queue, traces };
}

function signedReturnPaths(input: SendingInput): ReturnPaths {
  let since: Promise<Date> | undefined;
  const readSince = async () => new Date((await applianceFact(input.database.db, 'return_path_tags_since')) ?? 0);
  return returnPaths({
    key: input.secretBox.derive('return-path v1'),
    // Read once: a migration wrote it and nothing changes it.
    signedSince: () => (since ??= readSince().catch((err) => { since = undefined; throw err; })),
    retryWindowMs: input.config.outbound_queue_lifetime_hours * 3600_000,
  });
}
