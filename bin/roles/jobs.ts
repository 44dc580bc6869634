import type { Config } from '../../config/schema.js';
import { startScheduler, type Scheduler } from '../../jobs/scheduler.js';
import { pruneRequestLogsJob } from '../../jobs/prune-request-logs.js';
import { recheckDomainsJob } from '../../jobs/recheck-domains.js';
import { startWebhookDispatch } from '../../jobs/webhook-dispatch.js';
import { pruneWebhookMessagesJob } from '../../jobs/webhook-dispatch-prune.js';
import { startWorkRunner } from '../../jobs/work-runner.js';
import { ROLLUP_WORK } from '../../core/metrics/index.js';
import { PLATFORM_STREAM_WORK } from '../../core/automations/index.js';
import { releaseScheduledJob } from '../../jobs/release-scheduled.js';
import { releaseBroadcastsJob } from '../../jobs/release-broadcasts.js';
import { pruneIdempotencyKeysJob } from '../../jobs/prune-idempotency-keys.js';
import { ambiguousSweepJob } from '../../jobs/ambiguous-sweep.js';
import { pruneConsentRecordsJob, pruneDroppedReceivedJob, pruneEventsJob, startFullOrphanSweep, sweepOrphanRawJob } from '../../jobs/retention.js';
import { sampleBillableContactsJob } from '../../jobs/billable-contacts.js';
import { teamRetentionWindows } from '../../core/team/index.js';
import { pruneImportFilesJob } from '../../jobs/retention.js';
import { tlsReportsJob } from '../../jobs/tls-reports.js';
import { tlsReportSender } from '../tls-reports.js';
import { subscribeWorkWake } from '../../storage/redis/index.js';
import type { Services } from '../services.js';

export interface JobsRole {
  name: 'jobs';
  scheduler: Scheduler;
  stop(): Promise<void>;
}

export async function startJobsRole(services: Services, config: Config, mailHostname = 'localhost'): Promise<JobsRole> {
  const tlsReports = tlsReportSender(services, config, mailHostname);
  const retention = { db: services.database.db, spool: services.receiving.spool, clock: services.clock };
  const windows = teamRetentionWindows(services.database.db, services.plans);
  const scheduler = startScheduler([
    pruneRequestLogsJob(services.repos.requestLogs, services.clock, windows, config.logs_retention_days),
    pruneWebhookMessagesJob(services.database.db, services.clock, config.webhooks_retention_days),
    recheckDomainsJob(() => services.areas.sending.domains.recheckAll(), config.domains_recheck_cron),
    releaseScheduledJob({ db: services.database.db, clock: services.clock, logger: services.logger, wake: services.sending.wake }),
    pruneIdempotencyKeysJob(services.database.db, services.clock),
    ambiguousSweepJob({ db: services.database.db, clock: services.clock, logger: services.logger, recorder: services.sending.recorder }),
    pruneDroppedReceivedJob(retention, windows, config.receiving_dropped_retention_days),
    pruneEventsJob(retention, config.events_retention_days),
    sweepOrphanRawJob(retention),
    pruneConsentRecordsJob(retention),
    sampleBillableContactsJob(services.database.db, services.clock),
    pruneImportFilesJob({ db: services.database.db, files: services.importFiles, clock: services.clock }),
    ...(config.tls_rpt_enabled ? [tlsReportsJob(tlsReports.send, config.tls_rpt_cron)] : []),
    releaseBroadcastsJob({ db: services.database.db, clock: services.clock, logger: services.logger }),
  ], services.redis, services.logger);
  const orphanSweep = startFullOrphanSweep(retention, services.logger);
  const webhookDispatch = startWebhookDispatch(services.webhookDispatcher, config.webhooks_poll_ms, services.logger);
  // Standing durable work: enqueued once per installation (the key makes it idempotent).
  await services.work.enqueue(ROLLUP_WORK.kind, ROLLUP_WORK.key, {});
  // Imports whose row committed but whose work item did not (a crash in between): one item each, idempotently.
  await services.areas.audience.contactImports.resumeUnfinished();
  await services.work.enqueue(PLATFORM_STREAM_WORK.kind, PLATFORM_STREAM_WORK.key, {});
  const work = startWorkRunner(services.work, config.work_poll_ms, services.logger);
  // Work added by another process (an API enrolling runs) starts at once, not at the next poll.
  const workWake = await subscribeWorkWake(services.redis, () => work.wake());
  return { name: 'jobs', scheduler, stop: async () => { await workWake.stop(); await orphanSweep.stop(); await work.stop(); await webhookDispatch.stop(); await scheduler.stop(); tlsReports.close(); } };
}
