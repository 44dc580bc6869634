import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';

// One SMTP transaction over nodemailer's SMTP client (never hand-rolled SMTP), and what its
// result means for the reliability contract.
//
// When can the DATA terminator have gone out? nodemailer creates its data stream and pipes our
// message into it only after the server answered DATA with 354; the terminator "\r\n.\r\n" is
// written by that stream's flush, which runs only after OUR message stream has ended. So:
//   - our stream never read            → no byte of the message was sent: safe to try again;
//   - read but not ended                → the data was cut short, the terminator never went:
//                                          the server must discard it (RFC 5321 4.1.1.4): safe;
//   - ended, then a reply               → the reply decides (2xx delivered, 4xx/5xx refused);
//   - ended, then no reply (timeout,
//     dropped connection)               → AMBIGUOUS: the server may have taken the message.
// And the attempt is recorded before the terminator: `beforeData` (the SQLite write marking
// the recipient `submitting`) runs inside the stream's first read, before any data is pushed.

export interface SmtpTarget {
  /** IP address to connect to. */
  address: string;
  port: number;
  /** Host name of the MX (TLS SNI and certificate name). */
  hostname: string;
  tls: 'opportunistic' | 'enforced';
}

export interface SessionSettings {
  ehloName: string;
  localAddress?: string;
  /** TCP connect, greeting and STARTTLS. */
  connectTimeoutMs: number;
  /** Silence while a reply is awaited (nodemailer's idle socket timeout). */
  replyTimeoutMs: number;
  /**
   * Wall-clock bound on opening a session and on one transaction. The reply timeout only measures
   * silence: a remote trickling an endless reply a line at a time would otherwise hold the
   * connection (and the recipient) for ever.
   */
  transactionTimeoutMs: number;
  /** CAs certificates are verified against (the system's plus `outbound_tls_ca_file`); undefined: node's defaults. */
  ca?: string[];
}

/**
 * Largest single reply taken from a remote MX. RFC 5321 limits a reply line to 512 octets; the
 * longest real replies (EHLO lists, multiline 5xx) are a few KiB. A longer one is an endless reply:
 * nodemailer drops the connection instead of buffering it (its own default is 1 MiB).
 */
export const maxReplyBytes = 64 * 1024;

export type SmtpAttempt =
  | { kind: 'accepted'; response: string }
  /** An SMTP reply refused the message; `afterData` when it answered the data itself. */
  | { kind: 'refused'; response: string; afterData: boolean }
  /** Nothing was submitted (connection, TLS, greeting or the data cut short). */
  | { kind: 'not_submitted'; error: string; response?: string }
  /** The data and its terminator went out and no reply came. */
  | { kind: 'no_reply'; error: string };

/** What a mail admin checks of a hop's TLS: protocol, cipher, and whether the certificate verified. */
export interface TlsInfo {
  version: string;
  cipher: string;
  verified: boolean;
  /** Why the certificate did not verify (node's code, e.g. ERR_TLS_CERT_ALTNAME_INVALID); absent when it did. */
  failure?: string;
}

export interface Envelope {
  from: string;
  to: string;
  /** DSN envelope id: the email id, so a DSN names it. */
  envid: string;
}

type NodemailerError = Error & { code?: string; response?: string; responseCode?: number; command?: string };

/** A connected session that can carry several transactions in a row. */
export class SmtpSession {
  private broken = false;
  private constructor(private readonly conn: SMTPConnection, readonly target: SmtpTarget, private readonly transactionTimeoutMs: number) {
    conn.on('error', () => { this.broken = true; });
    conn.on('end', () => { this.broken = true; });
  }

  static async open(target: SmtpTarget, settings: SessionSettings, plaintextFallback = false): Promise<SmtpSession> {
    const enforced = target.tls === 'enforced';
    const conn = new SMTPConnection({
      host: target.address, port: target.port, name: settings.ehloName, localAddress: settings.localAddress,
      servername: target.hostname,
      requireTLS: enforced, opportunisticTLS: !enforced, ignoreTLS: plaintextFallback && !enforced,
      // Opportunistic TLS takes any certificate (as MTAs do); enforced TLS needs a valid one.
      // Either way the certificate is checked (against `ca`), so the session can tell TLS-RPT and
      // the attempt log whether it verified.
      tls: { rejectUnauthorized: enforced, servername: target.hostname, ca: settings.ca },
      connectionTimeout: settings.connectTimeoutMs, greetingTimeout: settings.connectTimeoutMs,
      socketTimeout: settings.replyTimeoutMs, maxResponseSize: maxReplyBytes, logger: false,
    });
    conn.on('error', () => undefined);
    // nodemailer reports most connection failures as an 'error' event, not to the callback.
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error) => { clearTimeout(timer); conn.close(); reject(err); };
      // EHLO after STARTTLS is outside nodemailer's connection deadline, and a trickled reply never
      // trips its idle timeout: the whole set-up gets a wall-clock bound.
      const timer = setTimeout(() => failed(Object.assign(new Error(`session set-up took longer than ${settings.transactionTimeoutMs} ms`), { code: 'ETIMEDOUT' })), settings.transactionTimeoutMs);
      conn.once('error', failed);
      conn.connect((err) => {
        conn.off('error', failed);
        if (err) failed(err);
        else { clearTimeout(timer); resolve(); }
      });
    });
    return new SmtpSession(conn, target, settings.transactionTimeoutMs);
  }

  /** The TLS the session runs under (after STARTTLS), or null in plaintext. */
  get tls(): TlsInfo | null {
    const conn = this.conn as unknown as { secure?: boolean; _socket?: TLSSocket };
    const socket = conn._socket;
    if (!conn.secure || !socket || typeof socket.getProtocol !== 'function') return null;
    const failure = socket.authorized ? undefined : String(socket.authorizationError ?? 'unverified');
    return { version: socket.getProtocol() ?? 'unknown', cipher: socket.getCipher()?.name ?? 'unknown', verified: socket.authorized, ...(failure ? { failure } : {}) };
  }

  get usable(): boolean {
    return !this.broken && !(this.conn as unknown as { _destroyed?: boolean })._destroyed;
  }

  /** One transaction; `beforeData` runs (and must finish) before any message byte is written. */
  send(envelope: Envelope, message: Buffer, beforeData: () => Promise<boolean>): Promise<SmtpAttempt> {
    let dataStarted = false;
    let dataEnded = false;
    let abortedBeforeData = false;
    const stream = new Readable({
      read() {
        if (dataStarted) return;
        dataStarted = true;
        beforeData().then(
          (go) => {
            if (!go) { abortedBeforeData = true; this.destroy(new Error('attempt not recorded')); return; }
            this.push(message);
            this.push(null);
          },
          (err: Error) => { abortedBeforeData = true; this.destroy(err); },
        );
      },
    });
    stream.once('end', () => { dataEnded = true; });
    return new Promise((resolve) => {
      let settled = false;
      const settle = (attempt: SmtpAttempt) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(attempt);
      };
      // nodemailer never calls back a send whose connection we close: the deadline answers itself.
      const timer = setTimeout(() => {
        this.broken = true;
        this.conn.close();
        const e: NodemailerError = Object.assign(new Error(`the transaction took longer than ${this.transactionTimeoutMs} ms`), { code: 'ETIMEDOUT' });
        settle(interpret(e, { dataStarted, dataEnded, abortedBeforeData }));
      }, this.transactionTimeoutMs);
      this.conn.send(
        { from: envelope.from, to: [envelope.to], size: message.length, dsn: { envid: envelope.envid, ret: 'HDRS', notify: ['FAILURE', 'DELAY'] } },
        stream,
        (err, info) => {
          if (!err && info) return settle({ kind: 'accepted', response: info.response });
          const e = err as NodemailerError;
          if (e.code !== 'EENVELOPE' && e.code !== 'EMESSAGE') this.broken = true;
          settle(interpret(e, { dataStarted, dataEnded, abortedBeforeData }));
        },
      );
    });
  }

  /** After a refused transaction the session is reset before it carries another. */
  reset(): Promise<boolean> {
    if (!this.usable) return Promise.resolve(false);
    // nodemailer never calls back a RSET whose connection closes: settle on close or a deadline.
    return new Promise((resolve) => {
      const settle = (ok: boolean) => {
        clearTimeout(timer);
        this.conn.off('end', onEnd);
        this.conn.off('error', onEnd);
        if (!ok) this.broken = true;
        resolve(ok);
      };
      const onEnd = () => settle(false);
      const timer = setTimeout(onEnd, 10_000);
      this.conn.once('end', onEnd);
      this.conn.once('error', onEnd);
      this.conn.reset((err) => settle(!err));
    });
  }

  close(): void {
    this.broken = true;
    this.conn.quit();
    setTimeout(() => this.conn.close(), 1000).unref();
  }
}

function interpret(e: NodemailerError, data: { dataStarted: boolean; dataEnded: boolean; abortedBeforeData: boolean }): SmtpAttempt {
  const response = e.response ?? (e.code === 'EMESSAGE' && !e.responseCode ? '552 5.3.4 Message size exceeds the server\'s limit' : undefined);
  // A reply refusing the envelope (MAIL FROM, RCPT TO, DATA) or the message.
  if ((e.code === 'EENVELOPE' || e.code === 'EMESSAGE') && response) return { kind: 'refused', response, afterData: data.dataEnded };
  if (data.abortedBeforeData || !data.dataEnded) {
    return { kind: 'not_submitted', error: `${e.code ?? 'ERROR'}: ${e.message}`, response: e.responseCode ? e.response : undefined };
  }
  // The terminator may have gone out. A final reply still counts (e.g. 421 after the data).
  if (e.responseCode && e.response) return { kind: 'refused', response: e.response, afterData: true };
  return { kind: 'no_reply', error: `${e.code ?? 'ERROR'}: ${e.message}` };
}
