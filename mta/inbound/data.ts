import { finished, PassThrough } from 'node:stream';
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { OpsMetrics } from '../../core/ops-metrics.js';
import type { RecipientRoute } from '../../core/receiving/index.js';
import type { DnsResolver } from '../../dns/resolver.js';
import { decideScan, type FailMode, type ScanDecision } from '../../scanner/policy.js';
import type { Scanner, Verdict } from '../../scanner/verdict.js';
import { receivedRawKey, type Spool, type SpoolWriter } from '../../storage/files/index.js';
import { newId } from '../../core/ids.js';
import { HEADER_LIMIT, headerSectionSize, notAuthenticated, withKeyLookupBudget } from './auth-bounds.js';
import { authenticateMessage, type AuthSummary } from './authenticate.js';
import { BUDGET_FULL_TEXT, type Hold } from './budget.js';
import { DataRate, type DataRateLimits } from './data-rate.js';
import { LineGuard, type LineProblem } from './line-guard.js';
import { smtpError, storageReply } from './replies.js';

// DATA in one pass: the bytes go through the line guard into the spool file, into clamd and into
// memory at once; at the end of data the file is fsynced while the scan finishes and SPF/DKIM/
// DMARC/ARC run; only then does the message reach the database, and only after the commit does
// the client get 250. What is held in memory counts against the listener's in-flight budget
// (./budget), and a client sending slower than the minimum rate is cut off (./data-rate).

export interface ReceivedData {
  spoolKey: string;
  /** Set when the spool file was written at receivedRawKey(plannedId) (received mail). */
  plannedId?: string;
  raw: Buffer;
  receivedAt: Date;
  decision: Extract<ScanDecision, { action: 'keep' | 'drop_virus' }>;
  auth: AuthSummary;
  routes: RecipientRoute[];
}

export interface DataDeps {
  spool: Spool;
  scanner: Scanner;
  failMode: FailMode;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  hostname: string;
  authDeadlineMs: number;
  rate: DataRateLimits;
  /** Answers `text` with 421 and closes the session's connection at once. */
  hangUp(session: SMTPServerSession, text: string): void;
  metrics: OpsMetrics;
  /** Commits what the message is for (received mail, DSN, ARF); answers the 250 text (./commit). */
  commit(data: ReceivedData, session: SMTPServerSession): Promise<string>;
}

const refusals: Record<LineProblem, string> = {
  bare_cr: '5.6.0 Message refused: bare CR in the message content (RFC 5321 section 2.3.8)',
  dot_line_with_bare_lf: '5.6.0 Message refused: a line with a single dot next to a bare LF (SMTP smuggling)',
};

/** Receives, checks and stores one message; the caller releases `hold` once this settles. */
export async function receiveData(deps: DataDeps, stream: SMTPServerDataStream, session: SMTPServerSession, routes: RecipientRoute[], hold: Hold): Promise<string> {
  // Received mail is written straight at its first record's name; reports only pass through.
  const plannedId = routes.some((r) => r.kind === 'received') ? newId() : undefined;
  const refuseIfFull = (err: unknown) => {
    const reply = storageReply(err);
    if (reply !== err) deps.logger.warn({ session: session.id, code: (err as { code?: string }).code }, 'message refused: storage full, answered 452');
    return reply;
  };
  const writer = await deps.spool.create(plannedId ? receivedRawKey(plannedId) : undefined).catch((err: unknown) => { throw refuseIfFull(err); });
  let kept = false;
  try {
    const header = receivedHeader(deps, session, deps.clock.now());
    const { guard, chunks, verdict } = await consume(deps, stream, session, writer, header, hold);
    if (stream.sizeExceeded) return 'oversized'; // smtp-server answers 552 itself (rejectOversized)
    if (guard.problem) throw smtpError(554, refusals[guard.problem]);
    const raw = Buffer.concat(chunks);
    chunks.length = 0; // the pieces are copied into raw: not held twice while the message is checked and parsed
    const receivedAt = deps.clock.now();
    const [decision, auth] = await Promise.all([
      verdict.then((v) => decideScan({ enabled: deps.scanner.enabled, failMode: deps.failMode }, v)),
      authenticate(deps, raw, session),
      writer.finish(),
    ]);
    if (decision.action === 'tempfail') {
      deps.logger.warn({ session: session.id, reason: decision.reason }, 'scan failed: message deferred (fail-closed)');
      throw smtpError(451, '4.7.1 Message could not be scanned, try again later');
    }
    if (decision.action === 'refuse_too_big') throw smtpError(552, '5.3.4 Message too big to be scanned');
    if (guard.bareLf > 0) deps.logger.info({ session: session.id, bareLf: guard.bareLf }, 'bare LF line endings normalised');
    const reply = await deps.commit({ spoolKey: writer.key, plannedId, raw, receivedAt, decision, auth, routes }, session);
    kept = true;
    return reply;
  } catch (err) {
    throw refuseIfFull(err);
  } finally {
    // Once stored, the records own their names (the planned one included); an incoming name is
    // never needed again. Unstored, the file goes.
    if (!kept) await writer.abort();
    else if (!plannedId) await deps.spool.remove(writer.key).catch(() => undefined);
  }
}

async function consume(deps: DataDeps, stream: SMTPServerDataStream, session: SMTPServerSession, writer: SpoolWriter, header: Buffer, hold: Hold) {
  const guard = new LineGuard();
  const chunks: Buffer[] = [];
  const feed = deps.scanner.enabled ? new PassThrough() : undefined;
  // The scanner may give up (deadline, clamd gone) while bytes still arrive: that is its verdict,
  // not a crash.
  feed?.on('error', () => undefined);
  let tooBig = false;
  const scanned: Promise<Verdict> | undefined = feed ? timedScan(deps, feed) : undefined;
  const send = (chunk: Buffer) => {
    if (!feed || tooBig || feed.destroyed) return;
    if (guard.size + header.length > deps.scanner.maxBytes) {
      tooBig = true;
      feed.destroy();
      return;
    }
    feed.write(chunk);
  };
  // A failed write (a full disk) or a full in-flight budget is answered after the end of data:
  // the rest is drained unread so the reply comes at the terminator, in step with the client.
  let stopped: unknown;
  let kept = 0;
  const keep = async (chunk: Buffer) => {
    kept += chunk.length;
    if (!hold.grow(kept)) {
      deps.logger.warn({ session: session.id, ip: session.remoteAddress, bytes: kept }, 'message refused: in-flight budget full, answered 452');
      stopped = smtpError(452, BUDGET_FULL_TEXT);
      chunks.length = 0; // nothing of it is kept: the memory and the budget are free for others now
      hold.release();
      return;
    }
    chunks.push(chunk);
    await writer.write(chunk).catch((err: unknown) => { stopped = err ?? new Error('spool write failed'); });
    send(chunk);
  };
  await keep(header);
  const slow = watchRate(deps, stream, session);
  // A client that hangs up mid-message destroys the stream, and that must end this loop (and
  // remove the half-written file) instead of waiting forever. Not stream.pipeline, which does the
  // same: its finish aborts an AbortController, and that DOMException's stack cost ~50 µs a message.
  stream.pipe(guard);
  finished(stream, (err) => { if (err) guard.destroy(err); });
  try {
    slow.rate.waiting();
    for await (const chunk of guard as AsyncIterable<Buffer>) {
      slow.rate.received(chunk.length);
      if (!stream.sizeExceeded && !stopped) await keep(chunk); // else drain: nothing of it is kept
      slow.rate.waiting();
    }
  } catch (err) {
    // The client hung up or was cut off for its rate: no verdict is wanted any more.
    feed?.destroy();
    scanned?.catch(() => undefined);
    throw err;
  } finally {
    slow.stop();
  }
  if (stopped) {
    feed?.destroy();
    scanned?.catch(() => undefined);
    throw stopped;
  }
  if (stream.sizeExceeded) feed?.destroy();
  else if (feed && !tooBig) feed.end();
  const verdict: Promise<Verdict | 'too_big'> = tooBig ? scanned!.then(() => 'too_big' as const) : (scanned ?? Promise.resolve({ kind: 'error', reason: 'scanning is off' }));
  if (stream.sizeExceeded || guard.problem) verdict.catch(() => undefined);
  return { guard, chunks, verdict };
}

/** The scan, its verdict and time counted for /metrics. */
function timedScan(deps: DataDeps, feed: PassThrough): Promise<Verdict> {
  const started = performance.now();
  return deps.scanner.scan(feed).then((verdict) => {
    deps.metrics.scanned({ verdict: verdict.kind === 'infected' ? 'virus' : verdict.kind, seconds: (performance.now() - started) / 1000 });
    return verdict;
  });
}

const SLOW_TEXT = '4.4.2 Message data arriving too slowly, closing connection';

/** Cuts the session off (421, nothing stored) once its DATA rate is judged too slow (./data-rate). */
function watchRate(deps: DataDeps, stream: SMTPServerDataStream, session: SMTPServerSession) {
  const rate = new DataRate(deps.rate);
  if (deps.rate.minBytesPerSecond <= 0) return { rate, stop: () => undefined };
  const timer = setInterval(() => {
    if (!rate.tooSlow()) return;
    clearInterval(timer);
    deps.logger.warn({ session: session.id, ip: session.remoteAddress, bytes: rate.totalBytes, seconds: Math.round(rate.clientMs / 1000) }, 'inbound session cut off: data rate below the minimum, answered 421');
    deps.hangUp(session, SLOW_TEXT);
    // Ends the loop in consume(): the half-written file goes, nothing is stored.
    stream.destroy(smtpError(421, SLOW_TEXT));
  }, Math.min(1000, Math.max(50, deps.rate.graceMs / 4)));
  timer.unref();
  return { rate, stop: () => clearInterval(timer) };
}

/** SPF/DKIM/DMARC/ARC within svc's bounds (./auth-bounds): a huge header section is not checked. */
function authenticate(deps: DataDeps, raw: Buffer, session: SMTPServerSession): Promise<AuthSummary> {
  const headerBytes = headerSectionSize(raw);
  if (headerBytes > HEADER_LIMIT) {
    deps.logger.info({ session: session.id, headerBytes }, 'header section too large: not authenticated');
    return Promise.resolve(notAuthenticated(`header section of ${headerBytes} octets is over the ${HEADER_LIMIT} octet limit`));
  }
  const context = { ip: session.remoteAddress, helo: session.hostNameAppearsAs || '', sender: envelopeFrom(session), hostname: deps.hostname };
  return authenticateMessage(raw, context, withKeyLookupBudget(deps.resolver), deps.authDeadlineMs);
}

export const envelopeFrom = (session: SMTPServerSession): string => (session.envelope.mailFrom ? session.envelope.mailFrom.address : '');

/**
 * The trace header every MTA adds on acceptance (RFC 5321 section 4.4). Only connection facts
 * that smtp-server validated go in: the HELO name and reverse name are checked host names there.
 */
function receivedHeader(deps: DataDeps, session: SMTPServerSession, at: Date): Buffer {
  const helo = session.hostNameAppearsAs || 'unknown';
  const reverse = session.clientHostname && !session.clientHostname.startsWith('[') ? `${session.clientHostname} ` : '';
  const tls = session.secure && session.tlsOptions ? ` (using ${session.tlsOptions.version} with cipher ${session.tlsOptions.name})` : '';
  const rcpt = session.envelope.rcptTo.length === 1 ? `\r\n\tfor <${session.envelope.rcptTo[0]!.address}>` : '';
  const date = at.toUTCString().replace(/GMT$/, '+0000');
  const line = `Received: from ${helo} (${reverse}[${session.remoteAddress}])\r\n\tby ${deps.hostname} (svc) with ${session.transmissionType}${tls} id ${session.id}${rcpt};\r\n\t${date}\r\n`;
  return Buffer.from(line.replace(/[^\x20-\x7e\r\n\t]/g, '?'));
}
