import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { EmailAttachmentRow, EmailRow } from '../../storage/repos/index.js';
import { composeMessage, type TrackingInput } from './compose.js';
import { dkimSigner, type DkimKey } from './dkim.js';
import type { SignReply, SignRequest } from './sign-worker.js';

// Composing and signing in worker threads (one per spare core), so a 2-core machine signs on
// one core while the other runs SMTP and SQLite. With no spare core (or if a worker cannot
// start) it runs inline; the output is the same either way.

export interface MessageBuilder {
  build(email: EmailRow, attachments: EmailAttachmentRow[], key: DkimKey, at: Date, tracking?: TrackingInput): Promise<Buffer>;
  close(): Promise<void>;
}

export function messageBuilder(workers = Math.max(0, Math.min(4, availableParallelism() - 1))): MessageBuilder {
  const inline = dkimSigner();
  const buildInline = async (email: EmailRow, attachments: EmailAttachmentRow[], key: DkimKey, at: Date, tracking?: TrackingInput) =>
    inline.sign(await composeMessage(email, attachments, tracking), key, at);
  if (workers === 0) return { build: buildInline, close: async () => undefined };
  const pending = new Map<number, { resolve(b: Buffer): void; reject(e: Error): void }>();
  const pool: Worker[] = [];
  let nextId = 1;
  let turn = 0;
  for (let i = 0; i < workers; i++) {
    const worker = new Worker(new URL('./sign-worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (reply: SignReply) => {
      const waiter = pending.get(reply.id);
      pending.delete(reply.id);
      if (!waiter) return;
      if ('error' in reply) waiter.reject(new Error(reply.error));
      else waiter.resolve(Buffer.from(reply.message.buffer, reply.message.byteOffset, reply.message.byteLength));
    });
    worker.on('error', () => {
      const at = pool.indexOf(worker);
      if (at >= 0) pool.splice(at, 1);
    });
    pool.push(worker);
  }
  return {
    build(email, attachments, key, at, tracking) {
      const worker = pool[turn++ % Math.max(pool.length, 1)];
      if (!worker) return buildInline(email, attachments, key, at, tracking);
      const id = nextId++;
      return new Promise<Buffer>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, email, attachments, key, at: at.getTime(), tracking } satisfies SignRequest);
      });
    },
    async close() {
      await Promise.all(pool.map((w) => w.terminate()));
      for (const waiter of pending.values()) waiter.reject(new Error('signing workers stopped'));
      pending.clear();
    },
  };
}
