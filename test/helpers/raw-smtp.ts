import { connect, type Socket } from 'node:net';
import { DEFAULT_WAIT_MS, eventWithin } from './deadline.js';

// A scripted SMTP client over a plain socket, for what a real client library would never send:
// bare LF or CR, smuggled end-of-data sequences, odd address forms. Replies are read whole
// (multi-line replies joined) so a test can assert on each one.

export interface RawSmtp {
  /** The greeting. */
  greeting: string;
  /** Sends a command line (CRLF added) and answers the reply. */
  command(line: string): Promise<string>;
  /** Sends bytes exactly as given and answers the next reply. */
  sendRaw(bytes: string | Buffer): Promise<string>;
  /** Sends bytes and answers every reply that arrives until `count` replies were read. */
  replies(bytes: string | Buffer, count: number): Promise<string[]>;
  /** Settles when the socket has closed, whichever side closed it. */
  closed: Promise<void>;
  close(): void;
}

/** localAddress: the client's own address (any of 127.0.0.0/8 works on loopback). */
export async function rawSmtp(port: number, host = '127.0.0.1', localAddress?: string): Promise<RawSmtp> {
  const socket: Socket = connect({ port, host, ...(localAddress ? { localAddress } : {}) });
  socket.setNoDelay(true);
  let buffer = '';
  const waiting: { answer(reply: string): void; fail(err: Error): void }[] = [];
  const ready: string[] = [];
  // A reply still awaited when the socket closes never comes: say so now, and leave no timer
  // behind to hold the test process open until its deadline.
  const closed = new Promise<void>((resolve) => socket.once('close', () => {
    for (const pending of waiting.splice(0)) pending.fail(new Error(`the connection closed before a reply; buffer: ${JSON.stringify(buffer)}`));
    resolve();
  }));
  socket.on('data', (chunk) => {
    const taken = takeReplies(buffer + chunk.toString('latin1'));
    buffer = taken.rest;
    for (const reply of taken.replies) {
      const next = waiting.shift();
      if (next) next.answer(reply);
      else ready.push(reply);
    }
  });
  const nextReply = () => new Promise<string>((resolve, reject) => {
    const queued = ready.shift();
    if (queued !== undefined) return resolve(queued);
    const timer = setTimeout(() => reject(new Error(`no SMTP reply within ${DEFAULT_WAIT_MS} ms; buffer: ${JSON.stringify(buffer)}`)), DEFAULT_WAIT_MS);
    waiting.push({
      answer: (r) => { clearTimeout(timer); resolve(r); },
      fail: (err) => { clearTimeout(timer); reject(err); },
    });
  });
  await eventWithin(`an SMTP connection to ${host}:${port}`, socket, 'connect');
  const greeting = await nextReply();
  return {
    greeting,
    command(line) {
      socket.write(`${line}\r\n`);
      return nextReply();
    },
    sendRaw(bytes) {
      socket.write(bytes);
      return nextReply();
    },
    async replies(bytes, count) {
      socket.write(bytes);
      const out: string[] = [];
      for (let i = 0; i < count; i++) out.push(await nextReply());
      return out;
    },
    closed,
    close: () => socket.destroy(),
  };
}

/** The complete SMTP replies (through their last line, `NNN text`) at the start of `buffer`, and what follows them. */
export function takeReplies(buffer: string): { replies: string[]; rest: string } {
  const replies: string[] = [];
  let rest = buffer;
  for (;;) {
    const match = /^(\d{3}) .*\r\n/m.exec(rest);
    if (!match) return { replies, rest };
    const end = match.index + match[0].length;
    replies.push(rest.slice(0, end).trimEnd());
    rest = rest.slice(end);
  }
}
