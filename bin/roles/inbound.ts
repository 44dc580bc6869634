import type { Config } from '../../config/schema.js';
import type { Logger } from '../../core/logger.js';
import { startInboundServer, type InboundServer, type ReportHandler } from '../../mta/inbound/server.js';
import { loadTlsMaterial, reloadTlsMaterial } from '../../mta/inbound/tls.js';
import type { Services } from '../services.js';
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
    resolver: services.resolver,
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
