import { gzipSync } from 'node:zlib';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { isNotFound, type DnsResolver } from '../../dns/resolver.js';
import { markTlsRptReported, mtaStsPolicy, pruneTlsRpt, tlsRptCountsOf, unreportedTlsRptDays } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import { buildTlsReport, type TlsReportIdentity, type TlsReportJson } from './report.js';
import { parseTlsRptRecord, type ReportDestination } from './rua.js';

// The daily TLS-RPT run (jobs role): every finished UTC day with session counts and no report yet
// is reported to the policy domain's `rua` destinations — by mail (mailto:, RFC 8460 section 5.3,
// through the port bin/ hands in: svc's own SMTP delivery) or by HTTPS POST (https:, net/). A day
// whose destinations all failed is tried again at the next run, for three days, then given up.

/** A report mail, as RFC 8460 section 5.3 shapes it (the port composes and delivers it). */
export interface TlsReportMail {
  from: string;
  to: string;
  subject: string;
  headers: Record<string, string>;
  text: string;
  attachment: { filename: string; content: Buffer; contentType: 'application/tlsrpt+gzip' };
}

/** Delivers a report mail; null when the receiving MX took it, else why not. */
export type TlsReportMailer = (mail: TlsReportMail) => Promise<string | null>;
/** POSTs a gzipped report (net/outbound-tls.ts); null when taken, else why not. */
export type TlsReportPoster = (url: string, gzipped: Buffer) => Promise<string | null>;

export interface TlsReportDeps {
  db: Db;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  identity: TlsReportIdentity;
  from: string;
  mail: TlsReportMailer;
  post: TlsReportPoster;
}

/** Days a day's report is retried before it is given up; counts older than this are pruned. */
const RETRY_DAYS = 3;
const KEEP_DAYS = 14;

export interface TlsReportSummary {
  sent: number;
  noRua: number;
  failed: number;
  pruned: number;
}

export async function sendDueTlsReports(deps: TlsReportDeps): Promise<TlsReportSummary> {
  const now = deps.clock.now();
  const today = now.toISOString().slice(0, 10);
  const summary: TlsReportSummary = { sent: 0, noRua: 0, failed: 0, pruned: 0 };
  for (const { policy_domain: domain, day } of await unreportedTlsRptDays(deps.db, today)) {
    const destinations = await destinationsOf(deps.resolver, domain);
    if (destinations === undefined) { summary.failed++; continue; } // DNS trouble: next run
    if (!destinations.length) {
      await markTlsRptReported(deps.db, { policy_domain: domain, day, outcome: 'no_rua', detail: null, at: now.toISOString() });
      summary.noRua++;
      continue;
    }
    const report = buildTlsReport(deps.identity, domain, day, await tlsRptCountsOf(deps.db, domain, day), await mtaStsPolicy(deps.db, domain));
    const errors = await deliverReport(deps, domain, report, destinations);
    const sent = errors.length < destinations.length;
    const expired = Date.parse(`${day}T00:00:00Z`) + (RETRY_DAYS + 1) * 86_400_000 <= now.getTime();
    if (sent || expired) {
      await markTlsRptReported(deps.db, { policy_domain: domain, day, outcome: sent ? 'sent' : 'failed', detail: errors.join('; ').slice(0, 1000) || null, at: now.toISOString() });
    }
    deps.logger.info({ domain, day, destinations: destinations.length, errors }, sent ? 'TLS-RPT report sent' : 'TLS-RPT report not sent');
    if (sent) summary.sent++; else summary.failed++;
  }
  summary.pruned = await pruneTlsRpt(deps.db, new Date(now.getTime() - KEEP_DAYS * 86_400_000).toISOString().slice(0, 10));
  return summary;
}

/** The rua destinations; [] when the domain asks for no report, undefined when DNS could not say. */
async function destinationsOf(resolver: DnsResolver, domain: string): Promise<ReportDestination[] | undefined> {
  try {
    return parseTlsRptRecord((await resolver.resolveTxt(`_smtp._tls.${domain}`)).map((chunks) => chunks.join('')));
  } catch (err) {
    return isNotFound(err) ? [] : undefined;
  }
}

/** Sends to every destination; answers the failures. */
async function deliverReport(deps: TlsReportDeps, domain: string, report: TlsReportJson, destinations: readonly ReportDestination[]): Promise<string[]> {
  const gzipped = gzipSync(Buffer.from(JSON.stringify(report)));
  const start = Math.floor(Date.parse(report['date-range']['start-datetime']) / 1000);
  const end = Math.floor(Date.parse(report['date-range']['end-datetime']) / 1000);
  const submitter = deps.identity.organization;
  const errors: string[] = [];
  for (const destination of destinations) {
    const error = destination.kind === 'https'
      ? await deps.post(destination.url, gzipped)
      : await deps.mail({
        from: deps.from, to: destination.address,
        subject: `Report Domain: ${domain} Submitter: ${submitter} Report-ID: <${report['report-id']}>`,
        headers: { 'TLS-Report-Domain': domain, 'TLS-Report-Submitter': submitter },
        text: `This is an aggregate TLS report (RFC 8460) from ${submitter} for ${domain}, ${report['date-range']['start-datetime'].slice(0, 10)}.`,
        // RFC 8460 section 5.3: submitter!policy-domain!begin-timestamp!end-timestamp[!unique-id].json.gz
        attachment: { filename: `${submitter}!${domain}!${start}!${end}.json.gz`, content: gzipped, contentType: 'application/tlsrpt+gzip' },
      }).catch((err: Error) => err.message);
    if (error) errors.push(`${destination.kind === 'https' ? destination.url : destination.address}: ${error}`);
  }
  return errors;
}
