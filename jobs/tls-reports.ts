import cron from 'node-cron';
import type { TlsReportSummary } from '../core/tls-reports/index.js';
import type { Job } from './scheduler.js';

/**
 * Hourly by default (config `tls_rpt_cron`): finished UTC days whose TLS-RPT reports (RFC 8460) are
 * still to send go to the policy domains' rua destinations; a day that could not be sent is tried
 * at the next run. Hourly rather than once a day so a restart or an unreachable collector costs an
 * hour, not a day.
 */
export function tlsReportsJob(send: () => Promise<TlsReportSummary>, schedule: string): Job {
  if (!cron.validate(schedule)) throw new Error(`config: tls_rpt_cron: "${schedule}" is not a valid cron schedule`);
  return { name: 'tls-reports', schedule, leaseMs: 30 * 60_000, run: async () => ({ ...(await send()) }) };
}
