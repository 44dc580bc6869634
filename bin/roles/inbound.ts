import type { Config } from '../../config/schema.js';
import type { Logger } from '../../core/logger.js';
import { startInboundServer, type InboundServer, type ReportHandler } from '../../mta/inbound/server.js';
import { loadTlsMaterial, reloadTlsMaterial } from '../../mta/inbound/tls.js';
import type { Services } from '../services.js';
import { memoizedResolver } from '../../dns/cache.js';
import { startSubmission } from '../submission.js';
import type { SubmissionServers } from '../../mta/submission/server.js';

export interface InboundRole {
  name: 'inbound';
  smtp: InboundServer;
  /** SMTP submission for applications (587, 465), when it runs. */
  submission: SubmissionServers | undefined;
  /** Reads the configured certificate again and gives it to every listener (SIGHUP). */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

// Left in incoming/ by a crash before the 250: never acknowledged, so the sender still has them.
const STALE_INCOMING_MS = 60 * 60 * 1000;

/** The inbound SMTP listener (MX of the receiving domains, return paths, feedback address) and SMTP submission. */
export async function startInboundRole(services: Services, config: Config, logger: Logger, hostname: string, reports: ReportHandler): Promise<InboundRole> {
  const receiving = services.receiving;
  const swept = await receiving.spool.sweepIncoming(STALE_INCOMING_MS, Date.now());
  if (swept > 0) logger.info({ swept }, 'stale incoming spool files removed');
  const tlsSettings = { certFile: config.smtp_tls_cert_file, keyFile: config.smtp_tls_key_file, dataDir: config.data_dir, hostname };
  const tls = await loadTlsMaterial(tlsSettings, logger);
  const smtp = await startInboundServer({
    settings: {
      host: config.smtp_host,
      port: config.smtp_port,
      hostname,
      maxMessageBytes: config.smtp_max_message_bytes,
      maxConnections: config.smtp_max_connections,
      maxConnectionsPerIp: config.smtp_max_connections_per_ip,
      maxConnectionsPerNetwork: config.smtp_max_connections_per_network,
      connectionRatePerIp: config.smtp_connection_rate_per_ip,
      maxRecipients: config.smtp_max_recipients,
      maxJunkCommands: config.smtp_max_junk_commands,
      maxErrors: config.smtp_max_errors,
      socketTimeoutMs: config.smtp_socket_timeout_s * 1000,
      inflightBytesLimit: config.smtp_inflight_bytes_limit,
      minDataRateBytesPerSecond: config.smtp_min_data_rate_bytes_per_s,
      proxyFrom: config.smtp_proxy_protocol,
      tls,
      authDeadlineMs: Math.max(5000, config.dns_timeout_ms * 4),
    },
    routing: receiving.routing,
    ingest: receiving.ingest,
    reports,
    scanner: receiving.scanner,
    failMode: receiving.failMode,
    spool: receiving.spool,
    resolver: authResolver(services, config),
    clock: services.clock,
    logger,
    metrics: services.metrics,
  });
  const submission = await startSubmission(services, config, logger, hostname, tls).catch(async (err: unknown) => {
    await smtp.close();
    throw err;
  });
  return {
    name: 'inbound', smtp, submission,
    async reload() {
      const renewed = reloadTlsMaterial(tlsSettings, logger);
      if (!renewed) return;
      smtp.updateTls(renewed);
      submission?.updateTls(renewed);
    },
    stop: async () => { await Promise.all([smtp.close(), submission?.close()]); },
  };
}

/**
 * The received mail checks' resolver (SPF, DKIM, DMARC, ARC): answers kept in this process for up
 * to min(dns_cache_ttl_s, 10) s, as the recipient checks keep theirs. A burst from one sender asks
 * its SPF, DMARC and key records once, not once a message: the lookups were an eighth of the
 * inbound main thread's time under smtp-source (bench/README.md). Ten seconds is far below any
 * record's own TTL that a recursive resolver would honour, so a changed SPF record or a rotated
 * DKIM key is seen as soon as it would be anyway.
 */
function authResolver(services: Services, config: Config) {
  return memoizedResolver(services.resolver, { ttlMs: Math.min(config.dns_cache_ttl_s, 10) * 1000, maxEntries: 10_000, now: () => performance.now() });
}
