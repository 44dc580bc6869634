// Row types of outbound TLS (migration 023): MTA-STS policies and TLS-RPT counts. tables.ts lists them.

export interface MtaStsPolicyRow {
  /** The recipient (policy) domain, lower-case A-label. */
  domain: string;
  /** The `id=` of the `_mta-sts` TXT record the policy was fetched under. */
  policy_id: string;
  mode: 'enforce' | 'testing' | 'none';
  max_age: number;
  /** JSON array of the policy's `mx:` patterns. */
  mx: string;
  /** The policy file as served (TLS-RPT reports quote it line by line). */
  policy_text: string;
  fetched_at: string;
  expires_at: string;
}

export interface TlsRptCountRow {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  policy_domain: string;
  /** '' when no policy could be fetched (sts-policy-fetch-error). */
  policy_id: string;
  /** '' when no MX host was involved. */
  mx_host: string;
  /** `success` or an RFC 8460 result type. */
  result: string;
  sessions: number;
}

export interface TlsRptReportRow {
  policy_domain: string;
  day: string;
  /** sent | no_rua | failed (gave up) */
  outcome: string;
  detail: string | null;
  at: string;
}
