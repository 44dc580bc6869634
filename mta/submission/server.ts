import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { EmailsService, SendingDomains } from '../../core/emails/index.js';
import type { Logger } from '../../core/logger.js';
import type { Principal } from '../../core/principal.js';
import type { RateLimiter } from '../../core/rate-limit.js';
import { authDecision } from './auth.js';
import { dataDecision } from './data.js';
import { envelopeDecisions } from './envelope.js';
import { offerAuthOnlyOverTls } from './tls-first.js';

// SMTP submission for applications (RFC 6409 on 587 with STARTTLS required, RFC 8314 implicit
// TLS on 465): AUTH with an API key (./auth), the envelope (./envelope), the message handed to
// the API's send path (./data). Nothing is relayed without a login, and no login happens in the
// clear: on 587 AUTH is offered only after STARTTLS (./tls-first); on 465 TLS comes first.

export interface SubmissionSettings {
  host: string;
  /** STARTTLS port (587); 0: off. */
  port: number;
  /** Implicit TLS port (465); 0: off. */
  securePort: number;
  hostname: string;
  tls: { key: Buffer; cert: Buffer };
  maxMessageBytes: number;
  maxConnections: number;
  socketTimeoutMs: number;
}

export interface SubmissionDeps {
  settings: SubmissionSettings;
  /** core/api-keys' check of a bare key, as the HTTP API checks a Bearer key. */
  verifyKey(token: string): Promise<Principal>;
  /** Failed logins per client address. */
  authFailures: RateLimiter;
  /** The team's request bucket (the HTTP API's). */
  teamRate: RateLimiter;
  /** The API's send path. */
  emails: Pick<EmailsService, 'send'>;
  domains: Pick<SendingDomains, 'sendingDomain'>;
  logger: Logger;
}

export interface SubmissionListener {
  port: number;
  /** true: implicit TLS (465); false: STARTTLS (587). */
  implicitTls: boolean;
}

export interface SubmissionServers {
  listeners: SubmissionListener[];
  /** SMTP sessions open now across the listeners. */
  sessions(): number;
  /** New connections use this certificate from now on (a renewal); open sessions keep theirs. */
  updateTls(material: { key: Buffer; cert: Buffer }): void;
  close(): Promise<void>;
}

export async function startSubmissionServers(deps: SubmissionDeps): Promise<SubmissionServers> {
  const { settings } = deps;
  const wanted = [{ port: settings.port, implicitTls: false }, { port: settings.securePort, implicitTls: true }].filter((l) => l.port > 0);
  const servers: SMTPServer[] = [];
  const listeners: SubmissionListener[] = [];
  try {
    for (const listener of wanted) {
      const server = submissionServer(deps, listener.implicitTls);
      const port = await listen(server, settings.host, listener.port);
      servers.push(server);
      listeners.push({ port, implicitTls: listener.implicitTls });
      deps.logger.info({ address: `${settings.host}:${port}`, implicitTls: listener.implicitTls }, 'SMTP submission listening');
    }
  } catch (err) {
    await Promise.all(servers.map(closeServer));
    throw err;
  }
  return {
    listeners,
    sessions: () => servers.reduce((n, s) => n + s.connections.size, 0),
    updateTls: (material) => { for (const server of servers) server.updateSecureContext({ key: material.key, cert: material.cert }); },
    close: async () => { await Promise.all(servers.map(closeServer)); },
  };
}

function submissionServer(deps: SubmissionDeps, implicitTls: boolean): SMTPServer {
  const { settings, logger } = deps;
  const envelope = envelopeDecisions({ verifyKey: deps.verifyKey, teamRate: deps.teamRate, domains: deps.domains, logger });
  const options: SMTPServerOptions = {
    name: settings.hostname,
    banner: 'svc submission',
    secure: implicitTls,
    key: settings.tls.key,
    cert: settings.tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: false,
    allowInsecureAuth: false,
    hideSTARTTLS: false,
    authRequiredMessage: '5.7.0 Authentication required',
    size: settings.maxMessageBytes,
    maxClients: settings.maxConnections,
    socketTimeout: settings.socketTimeoutMs,
    // Open sessions get this long to finish on stop (under svc's 25 s stop budget), then hear 421.
    closeTimeout: 15_000,
    disableReverseLookup: true,
    logger: false,
    onAuth: authDecision({ verifyKey: deps.verifyKey, failures: deps.authFailures, logger }),
    onMailFrom: envelope.onMailFrom,
    onRcptTo: envelope.onRcptTo,
    onData: dataDecision({ emails: deps.emails, maxMessageBytes: settings.maxMessageBytes, logger }),
  };
  const server = new SMTPServer(options);
  if (!implicitTls) offerAuthOnlyOverTls(server);
  // A client's failed TLS handshake is its own doing and routine on the open internet: one info
  // line (smtp-server reports each failure twice with the same error object).
  const handshakes = new WeakSet<Error>();
  server.on('error', (err: Error & { library?: string; code?: string; remoteAddress?: string }) => {
    if (err.library !== 'SSL routines' && !err.code?.startsWith('ERR_SSL_')) return logger.error({ err: err.message }, 'submission listener error');
    if (handshakes.has(err)) return;
    handshakes.add(err);
    logger.info({ ip: err.remoteAddress, code: err.code }, 'submission TLS handshake failed');
  });
  return server;
}

function listen(server: SMTPServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve((server.server.address() as AddressInfo).port);
    });
  });
}

const closeServer = (server: SMTPServer) => new Promise<void>((resolve) => server.close(() => resolve()));
