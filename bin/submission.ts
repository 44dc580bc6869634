import type { Config } from '../config/schema.js';
import { authenticateToken, CachedKeyLookup } from '../core/api-keys/index.js';
import type { Logger } from '../core/logger.js';
import { rateLimiter } from '../core/rate-limit.js';
import { startSubmissionServers, type SubmissionServers } from '../mta/submission/server.js';
import type { TlsMaterial } from '../mta/inbound/tls.js';
import { authGenerationReader } from '../storage/repos/index.js';
import type { Services } from './services.js';

/**
 * SMTP submission (587 STARTTLS, 465 implicit TLS), run by the inbound role: the one unit that may
 * bind ports below 1024. Off when both ports are 0, and off without a certificate a client can
 * check (smtp_tls_cert_file) unless the operator allows the self-signed one: an application
 * hands its API key over this connection.
 */
export async function startSubmission(
  services: Services, config: Config, logger: Logger, hostname: string, tls: TlsMaterial | undefined,
): Promise<SubmissionServers | undefined> {
  if (config.submission_port === 0 && config.submissions_port === 0) return undefined;
  if (!tls) {
    logger.warn({}, 'SMTP submission off: no TLS certificate, and AUTH is never offered in the clear');
    return undefined;
  }
  if (tls.selfSigned && !config.submission_allow_self_signed) {
    logger.info({}, 'SMTP submission off: no certificate configured (smtp_tls_cert_file); '
      + 'submission_allow_self_signed runs it with the self-signed one');
    return undefined;
  }
  const keys = new CachedKeyLookup(services.repos.apiKeys, authGenerationReader(services.database));
  return startSubmissionServers({
    settings: {
      host: config.smtp_host,
      port: config.submission_port,
      securePort: config.submissions_port,
      hostname,
      tls,
      maxMessageBytes: config.smtp_max_message_bytes,
      maxConnections: config.smtp_max_connections,
      socketTimeoutMs: config.smtp_socket_timeout_s * 1000,
    },
    verifyKey: (token) => authenticateToken(keys, token, 'sending_access', 'emails:send'),
    authFailures: rateLimiter(services.redis, {
      capacity: config.submission_auth_failure_burst, refillPerSecond: 1 / config.submission_auth_failure_refill_s,
    }, logger, 'smtp-auth'),
    teamRate: services.api.rateLimit,
    emails: services.sending.emails,
    domains: services.sending.domains,
    logger,
  });
}
