import { Resolver } from 'node:dns/promises';
import { createRequire } from 'node:module';
import { createServer, type Socket } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { withDeadline } from './deadline.js';
import { freePort } from './ports.js';

// A scripted remote MX on loopback (smtp-server), for the outbound MTA's tests: per recipient it
// accepts, defers (4xx), rejects (5xx) at RCPT or after the data, drops the connection after the
// data, or never answers the data. It records every message with its Message-ID and checks its
// DKIM signature with mailauth against the test DNS server.

const require = createRequire(import.meta.url);
const { dkimVerify } = require('mailauth/lib/dkim/verify') as {
  dkimVerify(input: Buffer, options: { resolver: (name: string, type: string) => Promise<unknown> }): Promise<{ results: { status: { result: string }; signingDomain: string; signingHeaders?: { keys: string } }[] }>;
};

/** What the MX does with a recipient: at RCPT, or after the data. */
export type MxBehaviour =
  | { kind: 'accept' }
  | { kind: 'rcpt'; reply: string }
  | { kind: 'data'; reply: string }
  | { kind: 'drop-after-data' }
  | { kind: 'hang-after-data' };

export interface ReceivedMessage {
  mailFrom: string;
  rcptTo: string;
  messageId: string | undefined;
  raw: Buffer;
  dkim: string;
  dkimDomain?: string;
  /** The h= list of the signature. */
  signedHeaders?: string;
  secure: boolean;
  at: number;
}

export interface FakeMx {
  port: number;
  /** Messages the MX answered 250 for (or, for drop/hang, read completely). */
  received: ReceivedMessage[];
  /** Message-ID → how many times it was taken (with 250). */
  accepted(): Map<string, number>;
  /** Behaviour by recipient address (lower case); `default` otherwise. */
  script: Map<string, MxBehaviour>;
  setDefault(b: MxBehaviour): void;
  connections: number;
  /** The most messages ever in their data phase at once (the senders' concurrent transactions). */
  peakData: number;
  /** RCPT TO commands answered so far (a transaction seen before its data). */
  rcpts: number;
  stop(): Promise<void>;
}

export interface FakeMxOptions {
  port?: number;
  /** host:port of the test DNS server, for DKIM verification. */
  dns?: string;
  /** No STARTTLS offered. */
  noTls?: boolean;
  /** Wait this long before answering the data (widens the window a crash can hit). */
  replyDelayMs?: number;
  /** Skip recording raw messages (long runs). */
  keepRaw?: boolean;
  /** STARTTLS key and certificate (PEM); default: smtp-server's own self-signed pair. */
  tls?: { key: string; cert: string };
  /** Address to listen on (default 127.0.0.1): several MXs may share a port on 127.0.0.x. */
  host?: string;
}

export async function startFakeMx(options: FakeMxOptions = {}): Promise<FakeMx> {
  const port = options.port ?? (await freePort());
  const script = new Map<string, MxBehaviour>();
  let fallback: MxBehaviour = { kind: 'accept' };
  const received: ReceivedMessage[] = [];
  const acceptedIds: string[] = [];
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  if (options.dns) resolver.setServers([options.dns]);
  const behaviourOf = (session: SMTPServerSession) => script.get(session.envelope.rcptTo[0]?.address.toLowerCase() ?? '') ?? fallback;
  let connections = 0;
  // Sessions in their data phase (until the reply, or the session's end: a killed sender's never replies).
  const inData = new Set<string>();
  let peakData = 0;
  let rcpts = 0;
  const server: SMTPServer = new SMTPServer({
    authOptional: true, disableReverseLookup: true, logger: false, hideSTARTTLS: !!options.noTls, size: 50 * 1024 * 1024,
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    onConnect(_session, callback) { connections++; callback(); },
    onClose(session) { inData.delete(session.id); },
    onRcptTo(address, _session, callback) {
      rcpts++;
      const b = script.get(address.address.toLowerCase()) ?? fallback;
      if (b.kind === 'rcpt') return callback(replyError(b.reply));
      callback();
    },
    onData(stream, session, answer) {
      inData.add(session.id);
      peakData = Math.max(peakData, inData.size);
      const done = () => inData.delete(session.id);
      const callback: typeof answer = (err, message) => { done(); answer(err, message); };
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        void (async () => {
          const raw = Buffer.concat(chunks);
          const b = behaviourOf(session);
          const message = await describe(raw, session, resolver, !!options.dns);
          if (b.kind === 'drop-after-data' || b.kind === 'hang-after-data') {
            received.push(message);
            if (b.kind === 'drop-after-data') socketOf(server, session)?.destroy();
            done();
            return; // never answers
          }
          if (options.replyDelayMs) await new Promise((r) => setTimeout(r, options.replyDelayMs));
          if (b.kind === 'data') return callback(replyError(b.reply));
          if (options.keepRaw === false) message.raw = Buffer.alloc(0);
          received.push(message);
          if (message.messageId) acceptedIds.push(message.messageId);
          callback(null, 'Ok: queued');
        })();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(port, options.host ?? '127.0.0.1', () => resolve()));
  return {
    port, received, script,
    accepted: () => {
      const counts = new Map<string, number>();
      for (const id of acceptedIds) counts.set(id, (counts.get(id) ?? 0) + 1);
      return counts;
    },
    setDefault: (b) => { fallback = b; },
    get connections() { return connections; },
    get peakData() { return peakData; },
    get rcpts() { return rcpts; },
    stop: () => withDeadline('the fake MX to close', new Promise<void>((resolve) => {
      for (const c of (server as unknown as { connections: Set<{ _socket?: { destroy(): void } }> }).connections) c._socket?.destroy();
      server.close(() => resolve());
    })),
  };
}

function replyError(reply: string): Error {
  const match = /^(\d{3})[ -](.*)$/s.exec(reply);
  const err = new Error(match ? match[2] : reply) as Error & { responseCode?: number };
  err.responseCode = match ? Number(match[1]) : 550;
  return err;
}

function socketOf(server: SMTPServer, session: SMTPServerSession): { destroy(): void } | undefined {
  const connections = (server as unknown as { connections: Set<{ session?: SMTPServerSession; _socket?: { destroy(): void } }> }).connections;
  for (const c of connections) if (c.session === session || (c.session as { id?: string } | undefined)?.id === session.id) return c._socket;
  return undefined;
}

async function describe(raw: Buffer, session: SMTPServerSession, resolver: Resolver, verify: boolean): Promise<ReceivedMessage> {
  const headerEnd = raw.indexOf('\r\n\r\n');
  const headers = raw.subarray(0, headerEnd < 0 ? raw.length : headerEnd).toString().replace(/\r\n[ \t]+/g, ' ');
  const messageId = /^message-id:\s*(<[^>]+>)/im.exec(headers)?.[1];
  let dkim = 'none';
  let dkimDomain: string | undefined;
  let signedHeaders: string | undefined;
  if (verify) {
    try {
      const result = await dkimVerify(raw, { resolver: (name, type) => resolver.resolve(name, type as 'TXT') });
      const first = result.results[0];
      dkim = first?.status.result ?? 'none';
      dkimDomain = first?.signingDomain;
      signedHeaders = first?.signingHeaders?.keys;
    } catch (err) {
      dkim = `error: ${(err as Error).message}`;
    }
  }
  return {
    mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
    rcptTo: session.envelope.rcptTo[0]?.address ?? '',
    messageId, raw, dkim, dkimDomain, signedHeaders, secure: session.secure, at: Date.now(),
  };
}

/**
 * What a misbehaving remote MX does (startHostileMx): a raw `node:net` server, because smtp-server
 * cannot be made to break the protocol on purpose.
 *  - accept               a well-behaved MX (250 after the data)
 *  - silent-greeting      accepts TCP and never says anything
 *  - 421-after-mail       answers MAIL FROM with 421 and closes
 *  - 421-after-rcpt       answers RCPT TO with 421 and closes
 *  - stall-after-rcpt     stops talking after RCPT TO (the connection stays open)
 *  - trickle-after-mail   answers MAIL FROM with `250-` lines, one every `trickleMs`, for ever
 *  - endless-ehlo         answers EHLO with `250-` lines as fast as the client reads them
 *  - hang-after-data      reads the data and its terminator, never answers
 *  - endless-after-data   reads the data, then streams `250-` lines as fast as the client reads
 */
export type HostileBehaviour = 'accept' | 'silent-greeting' | '421-after-mail' | '421-after-rcpt' | 'stall-after-rcpt'
  | 'trickle-after-mail' | 'endless-ehlo' | 'hang-after-data' | 'endless-after-data';

export interface HostileMx {
  host: string;
  port: number;
  behaviour: HostileBehaviour;
  connections: number;
  /** Every message whose terminator arrived, with the behaviour it met. */
  messages: { messageId: string | undefined; behaviour: HostileBehaviour; answered: boolean }[];
  /** Bytes of endless or trickled reply written, over all connections. */
  streamedBytes: number;
  /** Connections still open. */
  open(): number;
  stop(): Promise<void>;
}

export interface HostileMxOptions {
  host: string;
  port: number;
  behaviour: HostileBehaviour;
  trickleMs?: number;
  /** An endless reply stops by itself after this many bytes (a client that never hangs up). */
  endlessLimitBytes?: number;
}

export async function startHostileMx(options: HostileMxOptions): Promise<HostileMx> {
  const sockets = new Set<Socket>();
  const limit = options.endlessLimitBytes ?? 256 * 1024 * 1024;
  const chunk = Buffer.from(`250-${'x'.repeat(94)}\r\n`.repeat(655)); // ~64 KiB of continuation lines
  const mx: HostileMx = {
    host: options.host, port: options.port, behaviour: options.behaviour, connections: 0, messages: [], streamedBytes: 0,
    open: () => sockets.size,
    stop: () => withDeadline('the hostile MX to close', new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); })),
  };
  const endless = (socket: Socket) => {
    const pump = () => {
      while (!socket.destroyed && mx.streamedBytes < limit) {
        mx.streamedBytes += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
    };
    pump();
  };
  const trickle = (socket: Socket) => {
    const timer = setInterval(() => {
      if (socket.destroyed) return clearInterval(timer);
      mx.streamedBytes += 10;
      socket.write('250-slow\r\n');
    }, options.trickleMs ?? 200);
    socket.once('close', () => clearInterval(timer));
  };
  const server = createServer((socket) => {
    mx.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const behaviour = mx.behaviour; // fixed for the connection's life
    let buffer = Buffer.alloc(0);
    let inData = false;
    const reply = (line: string) => { if (!socket.destroyed) socket.write(`${line}\r\n`); };
    if (behaviour !== 'silent-greeting') reply('220 hostile.test ESMTP');
    socket.on('data', (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          const raw = buffer.subarray(0, end).toString('latin1');
          buffer = buffer.subarray(end + 5);
          inData = false;
          const messageId = /^message-id:\s*(<[^>]+>)/im.exec(raw.replace(/\r\n[ \t]+/g, ' '))?.[1];
          const answered = behaviour !== 'hang-after-data' && behaviour !== 'endless-after-data';
          mx.messages.push({ messageId, behaviour, answered });
          if (behaviour === 'endless-after-data') endless(socket);
          else if (answered) reply('250 2.0.0 Ok: queued');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.subarray(0, eol).toString('latin1');
        buffer = buffer.subarray(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') {
          if (behaviour === 'endless-ehlo') { endless(socket); continue; }
          reply('250-hostile.test'); reply('250-SIZE 52428800'); reply('250 8BITMIME');
        } else if (verb === 'MAIL') {
          if (behaviour === '421-after-mail') { reply('421 4.3.2 hostile.test shutting down'); socket.end(); return; }
          if (behaviour === 'trickle-after-mail') { trickle(socket); continue; }
          reply('250 2.1.0 Ok');
        } else if (verb === 'RCPT') {
          if (behaviour === '421-after-rcpt') { reply('421 4.4.5 hostile.test too busy, try later'); socket.end(); return; }
          if (behaviour === 'stall-after-rcpt') continue;
          reply('250 2.1.5 Ok');
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 End data with <CR><LF>.<CR><LF>');
        } else if (verb === 'QUIT') { reply('221 2.0.0 Bye'); socket.end(); return; }
        else if (verb === 'RSET' || verb === 'NOOP') reply('250 2.0.0 Ok');
        else reply('502 5.5.2 Command not recognized');
      }
    });
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(options.port, options.host, () => resolve()); });
  return mx;
}
