import { connect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { eventWithin } from './deadline.js';
import { takeReplies } from './raw-smtp.js';

// A scripted SMTP client for hostile input, beyond test/inbound/raw-smtp.ts: it notices when the
// server closes the connection (so a test can tell "closed cleanly after a 421" from "hung"),
// counts replies of a flood without waiting for each, and can upgrade to TLS after a 220 to
// STARTTLS while keeping whatever plaintext arrived after that 220 (there must be none).

export interface HostileClient {
  greeting: string;
  /** Writes bytes exactly as given. */
  write(bytes: string | Buffer): void;
  /** Writes a command line (CRLF added) and answers its reply. */
  command(line: string): Promise<string>;
  /** Writes bytes exactly as given and answers the next reply. */
  sendRawReply(bytes: string | Buffer): Promise<string>;
  /** The next whole reply, or 'closed' once the server has closed the connection and nothing is left. */
  reply(timeoutMs?: number): Promise<string>;
  /** Reads replies until the server closes the connection or `max` were read. */
  drain(max: number, timeoutMs?: number): Promise<string[]>;
  /** Upgrades the connection to TLS (after the server's 220 to STARTTLS). */
  startTls(): Promise<void>;
  /** Plaintext that arrived after the 220 to STARTTLS, before the handshake (set by startTls). */
  plaintextAfterStartTls: string;
  readonly closed: boolean;
  close(): void;
}

export async function hostileClient(port: number): Promise<HostileClient> {
  let socket: Socket | TLSSocket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  let buffer = '';
  let closed = false;
  let upgrading = false;
  const ready: string[] = [];
  const waiting: ((reply: string) => void)[] = [];
  const deliver = (reply: string) => {
    const next = waiting.shift();
    if (next) next(reply);
    else ready.push(reply);
  };
  const client: HostileClient = {
    greeting: '',
    plaintextAfterStartTls: '',
    get closed() { return closed; },
    write(bytes) { socket.write(bytes); },
    command(line) {
      socket.write(`${line}\r\n`);
      return client.reply();
    },
    sendRawReply(bytes) {
      socket.write(bytes);
      return client.reply();
    },
    reply(timeoutMs = 20_000) {
      return new Promise<string>((resolve, reject) => {
        const queued = ready.shift();
        if (queued !== undefined) return resolve(queued);
        if (closed) return resolve('closed');
        const timer = setTimeout(() => reject(new Error(`no SMTP reply within ${timeoutMs} ms; buffer: ${JSON.stringify(buffer.slice(0, 200))}`)), timeoutMs);
        waiting.push((r) => { clearTimeout(timer); resolve(r); });
      });
    },
    async drain(max, timeoutMs = 20_000) {
      const out: string[] = [];
      while (out.length < max) {
        const r = await client.reply(timeoutMs);
        if (r === 'closed') break;
        out.push(r);
      }
      return out;
    },
    async startTls() {
      // A server that ran the commands pipelined behind STARTTLS would answer them in plaintext
      // now; give such answers time to arrive, keep them, then start the handshake.
      await new Promise((r) => setTimeout(r, 300));
      client.plaintextAfterStartTls = buffer + ready.splice(0).join('\r\n');
      buffer = '';
      upgrading = true;
      const plain = socket as Socket;
      plain.removeListener('data', onData);
      const secure = tlsConnect({ socket: plain, rejectUnauthorized: false, servername: 'mx.svc-test.net' });
      await eventWithin('the TLS handshake after STARTTLS', secure, 'secureConnect');
      socket = secure;
      upgrading = false;
      listen(secure);
    },
    close: () => socket.destroy(),
  };
  const onData = (chunk: Buffer) => {
    const taken = takeReplies(buffer + chunk.toString('latin1'));
    buffer = taken.rest;
    for (const reply of taken.replies) deliver(reply);
  };
  const listen = (s: Socket) => {
    s.on('data', onData);
    s.on('error', () => undefined);
    s.on('close', () => {
      if (upgrading) return;
      closed = true;
      for (const w of waiting.splice(0)) w('closed');
    });
  };
  await eventWithin(`an SMTP connection to port ${port}`, socket, 'connect');
  listen(socket);
  client.greeting = await client.reply();
  return client;
}
