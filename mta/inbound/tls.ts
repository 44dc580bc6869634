import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../../core/logger.js';

// STARTTLS material. A configured certificate and key are used as they are. Without one, the first
// start makes a self-signed certificate for the mail host name in <data_dir>/smtp-tls/ (kept, so the
// key does not change on every restart): sending MTAs use opportunistic TLS and accept it, which is
// far better than cleartext. The X.509 work is OpenSSL's (the `openssl` command), never ours.

export interface TlsMaterial {
  key: Buffer;
  cert: Buffer;
  selfSigned: boolean;
}

export interface TlsSettings {
  certFile: string;
  keyFile: string;
  dataDir: string;
  hostname: string;
}

const run = promisify(execFile);

/** The configured pair, the kept self-signed pair, a new self-signed pair, or undefined without openssl. */
export async function loadTlsMaterial(settings: TlsSettings, logger: Logger): Promise<TlsMaterial | undefined> {
  if (settings.certFile || settings.keyFile) {
    if (!settings.certFile || !settings.keyFile) throw new Error('smtp_tls_cert_file and smtp_tls_key_file must be set together');
    return { cert: readFileSync(settings.certFile), key: readFileSync(settings.keyFile), selfSigned: false };
  }
  const dir = join(settings.dataDir, 'smtp-tls');
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  if (!existsSync(certPath) || !existsSync(keyPath)) {
    try {
      await makeSelfSigned(dir, certPath, keyPath, settings.hostname);
      logger.info({ dir, hostname: settings.hostname }, 'self-signed STARTTLS certificate created');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'no STARTTLS: no certificate configured and openssl could not make one');
      return undefined;
    }
  }
  return { cert: readFileSync(certPath), key: readFileSync(keyPath), selfSigned: true };
}

/**
 * The configured certificate and key read again (a renewal: `systemctl reload svc-inbound`, or
 * SIGHUP), checked to be a pair Node can serve before any listener is given them. Answers
 * undefined when no certificate is configured (the self-signed one never changes) or the new
 * files are unusable — then the listeners keep serving the old pair, and one error line says why.
 */
export function reloadTlsMaterial(settings: TlsSettings, logger: Logger): TlsMaterial | undefined {
  if (!settings.certFile || !settings.keyFile) {
    logger.info({}, 'TLS reload: no certificate configured, the self-signed one stays');
    return undefined;
  }
  try {
    const material = { cert: readFileSync(settings.certFile), key: readFileSync(settings.keyFile), selfSigned: false };
    createSecureContext({ key: material.key, cert: material.cert });
    const leaf = new X509Certificate(material.cert);
    logger.info({ certFile: settings.certFile, subject: leaf.subject, validTo: leaf.validTo, fingerprint256: leaf.fingerprint256 }, 'TLS certificate reloaded');
    return material;
  } catch (err) {
    logger.error({ certFile: settings.certFile, keyFile: settings.keyFile, err: (err as Error).message }, 'TLS reload refused: the old certificate is still served');
    return undefined;
  }
}

/** What Node and smtp-server put on the error of a failed TLS handshake. */
interface HandshakeError extends Error {
  code?: string;
  library?: string;
  reason?: string;
  remoteAddress?: string;
  meta?: { tlsProtocol?: string | null };
}

/**
 * Logs a client's failed STARTTLS handshake (an old MTA offering only TLS 1.0/1.1, a scanner, no
 * shared cipher) once, at info: it is the client's doing, routine on the open internet, and
 * nothing for the operator to act on. smtp-server reports each failure twice with the same error
 * object (the TLS socket's `_tlsError`, then its `error`), hence the set. Answers false for any
 * other error, which the caller still logs as one.
 */
export function handshakeFailureLogger(logger: Logger): (err: Error) => boolean {
  const reported = new WeakSet<Error>();
  return (err) => {
    const failure = err as HandshakeError;
    if (failure.library !== 'SSL routines' && !failure.code?.startsWith('ERR_SSL_')) return false;
    if (reported.has(err)) return true;
    reported.add(err);
    logger.info({
      ip: failure.remoteAddress, reason: failure.reason ?? failure.code, code: failure.code, offered: failure.meta?.tlsProtocol ?? undefined,
    }, 'inbound TLS handshake failed');
    return true;
  };
}

async function makeSelfSigned(dir: string, certPath: string, keyPath: string, hostname: string): Promise<void> {
  // The name lands in an openssl argument (no shell): keep it to host name characters anyway.
  const name = /^[a-z0-9.-]{1,253}$/i.test(hostname) ? hostname : 'localhost';
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await run('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-sha256', '-days', '3650',
    '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`, '-keyout', keyPath, '-out', certPath,
  ], { timeout: 30_000 });
  // openssl makes the certificate 0644 less the umask; the folder is the owner's, so are its files.
  for (const file of [keyPath, certPath]) chmodSync(file, 0o600);
}
