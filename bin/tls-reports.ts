import type { Config } from '../config/schema.js';
import { sendDueTlsReports, type TlsReportSummary } from '../core/tls-reports/index.js';
import { reportMailer } from '../mta/outbound/report-mail.js';
import { routeFinder } from '../mta/outbound/routes.js';
import { SessionPool } from '../mta/outbound/session-pool.js';
import { tlsReportPoster, trustedCas } from '../net/outbound-tls.js';
import type { Services } from './services.js';

// The jobs role's TLS-RPT sender: report mail goes out through the outbound MTA's own delivery
// code (a small session pool of its own, the first region's EHLO name and source address), report
// POSTs through net/.

export function tlsReportSender(services: Services, config: Config, mailHostname: string): { send(): Promise<TlsReportSummary>; close(): void } {
  const region = services.regions('us-east-1');
  const ca = trustedCas(config.outbound_tls_ca_file);
  const pool = new SessionPool(
    { ehloName: region.ehloName, localAddress: region.sourceAddress, connectTimeoutMs: config.outbound_connect_timeout_s * 1000,
      replyTimeoutMs: config.outbound_reply_timeout_s * 1000, transactionTimeoutMs: config.outbound_transaction_timeout_s * 1000, ca },
    { idleMs: 5_000, maxMessagesPerSession: 100 },
  );
  const route = routeFinder(services.deliveryResolver, { relay: config.outbound_relay, port: config.outbound_port, maxTargets: 6, memoMs: 0 });
  const mail = reportMailer({ route, pool, hostname: mailHostname, now: () => services.clock.now() });
  const post = tlsReportPoster({ resolver: services.deliveryResolver, allowPrivate: config.mta_sts_allow_private, ca, timeoutMs: 60_000 });
  return {
    send: () => sendDueTlsReports({
      db: services.database.db, resolver: services.deliveryResolver, clock: services.clock, logger: services.logger,
      identity: { organization: mailHostname, contact: `postmaster@${mailHostname}` },
      from: config.tls_rpt_from || `tlsrpt-noreply@${mailHostname}`, mail, post,
    }),
    close: () => pool.closeAll(),
  };
}
