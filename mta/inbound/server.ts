import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { OpsMetrics } from '../../core/ops-metrics.js';
import type { IngestDeps, RecipientRoute, RoutingDeps } from '../../core/receiving/index.js';
import type { DnsResolver } from '../../dns/resolver.js';
import type { FailMode } from '../../scanner/policy.js';
import type { Scanner } from '../../scanner/verdict.js';
import type { Spool } from '../../storage/files/index.js';
import { guardDataBudget, InflightBudget, type Hold } from './budget.js';
import { guardCommands } from './command-guard.js';
import { ConnectionLimits } from './connection-limits.js';
import { commitMessage } from './commit.js';
import { temporaryFailure } from './replies.js';
import { connectDecision } from './connect.js';
import { receiveData, type ReceivedData } from './data.js';
import { mailFromDecision } from './mail-from.js';
import { rcptDecision } from './rcpt.js';
import { startShutdownResponder } from './shutdown-responder.js';
import { handshakeFailureLogger, type TlsMaterial } from './tls.js';

// The inbound listener: smtp-server with svc's limits and one file per verb decision — CONNECT
// (./connect), MAIL FROM (./mail-from), RCPT TO (./rcpt), DATA received in one pass (./data) and
// committed (./commit) — answered 250 only after the commit.

export interface InboundSettings {
  host: string;
  port: number;
  hostname: string;
  maxMessageBytes: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** Open at once from one IPv4 /24 or IPv6 /64 (./connection-limits). */
  maxConnectionsPerNetwork: number;
  connectionRatePerIp: number;
  maxRecipients: number;
  /** Junk commands and error replies per session between accepted messages (./command-guard). */
  maxJunkCommands: number;
  maxErrors: number;
  socketTimeoutMs: number;
  /** Bytes of messages held in memory at once across all sessions (./budget). */
  inflightBytesLimit: number;
  /** Slowest average DATA rate once socketTimeoutMs of it has passed (./data-rate); 0: none. */
  minDataRateBytesPerSecond: number;
  /** Load balancers allowed to send a PROXY header; empty: PROXY protocol off. */
  proxyFrom: readonly string[];
  tls: TlsMaterial | undefined;
  authDeadlineMs: number;
}

export type ReportRoute = Extract<RecipientRoute, { kind: 'dsn' | 'arf' }>;

/** Reads the DSNs and complaint reports that come back (./reports); answers the ids it recorded. */
export type ReportHandler = (data: ReceivedData, routes: readonly ReportRoute[]) => Promise<string[]>;

export interface InboundDeps {
  settings: InboundSettings;
  routing: RoutingDeps;
  ingest: IngestDeps;
  reports: ReportHandler;
  scanner: Scanner;
  failMode: FailMode;
  spool: Spool;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  metrics: OpsMetrics;
}

export interface InboundServer {
  port: number;
  address: string;
  /** Bytes of the in-flight budget held now (0 when no message is in DATA). */
  inflightBytes(): number;
  /** SMTP sessions open now. */
  sessions(): number;
  /** New connections use this certificate from now on (a renewal); open sessions keep theirs. */
  updateTls(material: { key: Buffer; cert: Buffer }): void;
  close(): Promise<void>;
}

export async function startInboundServer(deps: InboundDeps): Promise<InboundServer> {
  const { settings, logger } = deps;
  const limits = new ConnectionLimits({
    maxPerIp: settings.maxConnectionsPerIp, maxPerNetwork: settings.maxConnectionsPerNetwork, ratePerMinute: settings.connectionRatePerIp,
  });
  const connect = connectDecision(limits, logger);
  const rcpt = rcptDecision(deps.routing, logger);
  const budget = new InflightBudget(settings.inflightBytesLimit);
  // Holds made at the DATA command (declared SIZE), waiting for onData, by session id.
  const declared = new Map<string, Hold>();
  if (settings.inflightBytesLimit < settings.maxMessageBytes) {
    logger.warn({ inflightBytesLimit: settings.inflightBytesLimit, maxMessageBytes: settings.maxMessageBytes }, 'in-flight budget is below the message size limit: the largest messages are always deferred');
  }
  const dataDeps = {
    spool: deps.spool, scanner: deps.scanner, failMode: deps.failMode, resolver: deps.resolver, clock: deps.clock, logger, metrics: deps.metrics,
    hostname: settings.hostname, authDeadlineMs: settings.authDeadlineMs, commit: (data: ReceivedData, session: SMTPServerSession) => commitMessage(deps, data, session),
    rate: { minBytesPerSecond: settings.minDataRateBytesPerSecond, graceMs: settings.socketTimeoutMs },
    hangUp: (session: SMTPServerSession, text: string) => hangUp(server, session, text),
  };

  const server = new SMTPServer({
    name: settings.hostname,
    banner: 'svc',
    size: settings.maxMessageBytes,
    rejectOversized: true,
    maxClients: settings.maxConnections,
    maxRecipients: settings.maxRecipients,
    socketTimeout: settings.socketTimeoutMs,
    // On stop, sessions get this long to finish (a message in DATA completes and is answered),
    // then hear 421. Under svc's 25 s stop limit, so a client that never talks cannot turn a
    // clean stop into a forced exit.
    closeTimeout: 15_000,
    // Unauthenticated relaying is never offered; authenticated submission has listeners of its own (mta/submission).
    disabledCommands: settings.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(settings.tls ? { key: settings.tls.key, cert: settings.tls.cert } : {}),
    useProxy: settings.proxyFrom.length > 0 ? [...settings.proxyFrom] : false,
    resolver: { reverse: (ip, callback) => { deps.resolver.reverse(ip).then((names) => callback(null, names), (err: Error) => callback(err)); } },
    logger: false,

    onConnect: connect.onConnect,
    onClose(session) {
      connect.onClose(session);
      declared.get(session.id)?.release();
      declared.delete(session.id);
    },
    onMailFrom: mailFromDecision,
    onRcptTo: rcpt.onRcptTo,
    onData(stream, session, callback) {
      const hold = declared.get(session.id) ?? budget.hold(0)!;
      declared.delete(session.id);
      receiveData(dataDeps, stream, session, rcpt.routesOf(session), hold).finally(() => hold.release()).then((reply) => callback(null, reply), (err: Error & { responseCode?: number }) => {
        if (err.responseCode) return callback(err);
        logger.error({ session: session.id, err: err.message }, 'message could not be stored: answered 451');
        callback(temporaryFailure());
      });
    },
  });
  guardCommands(server, { maxJunkCommands: settings.maxJunkCommands, maxErrors: settings.maxErrors }, logger);
  guardDataBudget(server, budget, declared, logger);
  const handshakeFailed = handshakeFailureLogger(logger);
  server.on('error', (err) => { if (!handshakeFailed(err)) logger.error({ err: err.message }, 'inbound listener error'); });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const info = server.server.address() as AddressInfo;
  logger.info({ address: info.address, port: info.port, starttls: !!settings.tls, scanning: deps.scanner.enabled }, 'inbound SMTP listening');
  return {
    port: info.port,
    address: `${info.address}:${info.port}`,
    inflightBytes: () => budget.inUse,
    sessions: () => server.connections.size,
    updateTls: (material) => { if (settings.tls) server.updateSecureContext({ key: material.key, cert: material.cert }); },
    close: () => drainAndClose(server, settings, info.port, logger),
  };
}

/** 421 and closed now, even in the middle of DATA (smtp-server closes the connection on a 421). */
function hangUp(server: SMTPServer, session: SMTPServerSession, text: string): void {
  const connections = server.connections as unknown as Set<{ id: string; send(code: number, text: string): void }>;
  for (const connection of connections) if (connection.id === session.id) return connection.send(421, text);
}

/** Stops taking sessions, lets open ones finish (idle ones hear 421), and answers 421 to new ones meanwhile. */
async function drainAndClose(server: SMTPServer, settings: InboundSettings, port: number, logger: Logger): Promise<void> {
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  const responder = await startShutdownResponder(settings.host, port, settings.hostname, logger);
  await drained;
  await responder.close();
}
