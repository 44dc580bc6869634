import type { TlsInfo } from './smtp-client.js';

// What one SMTP session's TLS came to, in TLS-RPT's words (RFC 8460 section 4.3): `success`, or a
// result type. Read from the session's TLS (opportunistic and `testing` sessions take any
// certificate but still check it) or from the error that kept a session from opening.

export type TlsFailureType =
  | 'starttls-not-supported'
  | 'certificate-host-mismatch'
  | 'certificate-expired'
  | 'certificate-not-trusted'
  | 'validation-failure'
  | 'sts-policy-fetch-error';

export type TlsResult = 'success' | TlsFailureType;

const untrusted = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE', 'CERT_REJECTED',
]);

/** A certificate verification code (node's `authorizationError`, or a TLS error's code) as a result type. */
export function certificateResult(code: string): TlsFailureType {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') return 'certificate-host-mismatch';
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return 'certificate-expired';
  if (untrusted.has(code)) return 'certificate-not-trusted';
  return 'validation-failure';
}

/** An opened session: plaintext means the MX offered no STARTTLS (or its STARTTLS broke). */
export function sessionTlsResult(tls: TlsInfo | null): TlsResult {
  if (!tls) return 'starttls-not-supported';
  return tls.verified ? 'success' : certificateResult(tls.failure ?? 'unverified');
}

/**
 * A session that could not open: a TLS reason when TLS was the cause (nodemailer keeps the TLS
 * error's own code as `originalCode`), null for anything else (refused connection, timeout, 4xx greeting).
 */
export function failedTlsResult(err: { code?: string; originalCode?: string; command?: string; message?: string }): TlsFailureType | null {
  if (err.originalCode && (/^ERR_TLS_|CERT|SIGNATURE|ISSUER/.test(err.originalCode))) return certificateResult(err.originalCode);
  if (err.code === 'ETLS' && err.command === 'STARTTLS') return 'starttls-not-supported';
  if (err.code === 'ETLS') return 'validation-failure';
  return null;
}
