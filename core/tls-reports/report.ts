import type { MtaStsPolicyRow, TlsRptCountRow } from '../../storage/repos/index.js';

// One day's TLS-RPT report for one policy domain (RFC 8460 section 4), from the session counts
// the outbound role kept: per policy (by the id it was fetched under), the successful and failed session counts and the failures by MX host
// and result type.

export interface TlsReportIdentity {
  /** The reporting organization (the appliance's mail host name). */
  organization: string;
  /** Where the domain's operator can reach the reporter. */
  contact: string;
}

export interface TlsReportJson {
  'organization-name': string;
  'date-range': { 'start-datetime': string; 'end-datetime': string };
  'contact-info': string;
  'report-id': string;
  policies: {
    policy: { 'policy-type': 'sts'; 'policy-string'?: string[]; 'policy-domain': string; 'mx-host'?: string[] };
    summary: { 'total-successful-session-count': number; 'total-failure-session-count': number };
    'failure-details'?: { 'result-type': string; 'receiving-mx-hostname'?: string; 'failed-session-count': number }[];
  }[];
}

export function buildTlsReport(
  identity: TlsReportIdentity, domain: string, day: string, rows: readonly TlsRptCountRow[], policy: MtaStsPolicyRow | undefined,
): TlsReportJson {
  const byPolicy = new Map<string, TlsRptCountRow[]>();
  for (const row of rows) byPolicy.set(row.policy_id, [...(byPolicy.get(row.policy_id) ?? []), row]);
  const policies = [...byPolicy.entries()].map(([policyId, counts]) => {
    const known = policyId && policy?.policy_id === policyId ? policy : undefined;
    const failures = counts.filter((c) => c.result !== 'success');
    return {
      // '' (the policy could not be fetched) and an id since replaced are reported without its text.
      policy: {
        'policy-type': 'sts' as const, 'policy-domain': domain,
        ...(known ? { 'policy-string': known.policy_text.split(/\r?\n/).filter((l) => l.trim()), 'mx-host': JSON.parse(known.mx) as string[] } : {}),
      },
      summary: {
        'total-successful-session-count': sum(counts.filter((c) => c.result === 'success')),
        'total-failure-session-count': sum(failures),
      },
      ...(failures.length ? {
        'failure-details': failures.map((f) => ({
          'result-type': f.result, ...(f.mx_host ? { 'receiving-mx-hostname': f.mx_host } : {}), 'failed-session-count': f.sessions,
        })),
      } : {}),
    };
  });
  return {
    'organization-name': identity.organization,
    'date-range': { 'start-datetime': `${day}T00:00:00Z`, 'end-datetime': `${day}T23:59:59Z` },
    'contact-info': identity.contact,
    'report-id': `${day}.${domain}@${identity.organization}`,
    policies,
  };
}

const sum = (rows: readonly TlsRptCountRow[]) => rows.reduce((n, r) => n + r.sessions, 0);
