import { domainToASCII } from 'node:url';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Database } from '../storage/sql/index.js';
import { openSpool, type Spool } from '../storage/files/index.js';
import type { SecretBox } from '../storage/files/index.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { DeliveryRecorder } from '../core/emails/index.js';
import { emailFeedbackSink } from '../core/receiving/index.js';
import { groupCommit } from '../storage/sql/index.js';
import type { FeedbackDeps } from '../core/receiving/index.js';
import type { IngestDeps } from '../core/receiving/index.js';
import { catchAll, fixedLimits, type ReceivingDomains, type VerpChecker } from '../core/receiving/index.js';
import type { RoutingDeps } from '../core/receiving/index.js';
import { receivingService, type ReceivingService } from '../core/receiving/index.js';
import { clamdScanner, parseClamdTarget } from '../scanner/clamd.js';
import type { FailMode } from '../scanner/policy.js';
import { noScanner, type Scanner } from '../scanner/verdict.js';
import { regionNames } from '../config/regions.js';
import { regionDirectory } from '../core/regions.js';

export interface ReceivingInput {
  config: Config;
  database: Database;
  logger: Logger;
  clock: Clock;
  secretBox: SecretBox;
  domains: ReceivingDomains;
  returnPaths: VerpChecker;
  /** The sending side's recorder: reports land on the recipients it records. */
  recorder: DeliveryRecorder;
  hostname: string;
  /** Where signed download links point (core/link-base.ts). */
  linkBase: () => string;
}

export interface Receiving {
  /** The receiving API (list, get, attachments, delete, signed downloads). */
  service: ReceivingService;
  spool: Spool;
  routing: RoutingDeps;
  ingest: IngestDeps;
  scanner: Scanner;
  failMode: FailMode;
  /** DSNs and complaint reports, recorded through the sending side's delivery recorder. */
  feedback: FeedbackDeps;
}

/** The receiving side's pieces, built once: the api role serves `service`, the inbound role the rest. */
export function receivingArea(input: ReceivingInput): Receiving {
  const { config, database, logger, clock } = input;
  const spool = openSpool(join(config.data_dir, 'spool'));
  const scanner = config.scanner_clamd
    ? clamdScanner({ target: parseClamdTarget(config.scanner_clamd), timeoutMs: config.scanner_timeout_ms, maxBytes: config.scanner_max_bytes })
    : noScanner;
  const service = receivingService({ db: database.db, spool, secretBox: input.secretBox, clock, logger, linkBase: input.linkBase });
  return {
    service,
    spool,
    routing: {
      domains: input.domains,
      returnPaths: input.returnPaths,
      mailboxes: catchAll,
      feedbackAddress: (config.feedback_address || `feedback@${input.hostname}`).toLowerCase(),
      ownHosts: ownHostNames(input.hostname, config),
    },
    ingest: {
      db: database.db, logger, commits: groupCommit(database.db, { windowMs: 2, maxBatch: 200 }),
      limits: fixedLimits(config.receiving_daily_cap, config.receiving_storage_quota_mb * 1024 * 1024),
    },
    scanner,
    failMode: config.scanner_fail_mode as FailMode,
    feedback: {
      db: database.db, clock, logger, returnPaths: input.returnPaths,
      sink: emailFeedbackSink({ db: database.db, clock, recorder: input.recorder }),
    },
  };
}

/** The appliance's own mail host names: mail_hostname and every region's inbound, MAIL FROM and EHLO names. */
function ownHostNames(hostname: string, config: Config): Set<string> {
  const regions = regionDirectory(hostname, config.regions);
  const names = [hostname, ...regionNames.flatMap((name) => {
    const region = regions(name);
    return [region.inboundHost, region.mailFromHost, region.ehloName];
  })];
  return new Set(names.map((name) => domainToASCII(name.trim().toLowerCase().replace(/\.$/, ''))).filter(Boolean));
}
