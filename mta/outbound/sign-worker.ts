import { parentPort } from 'node:worker_threads';
import type { EmailAttachmentRow, EmailRow } from '../../storage/repos/index.js';
import { composeMessage, type TrackingInput } from './compose.js';
import { dkimSigner, type DkimKey } from './dkim.js';

// A worker thread that composes (nodemailer) and DKIM-signs messages: the CPU-heavy part of
// sending, moved off the thread that talks SMTP and SQLite. Its signer keeps its own parsed keys.

export interface SignRequest {
  id: number;
  email: EmailRow;
  attachments: EmailAttachmentRow[];
  key: DkimKey;
  at: number;
  tracking?: TrackingInput;
}

export type SignReply = { id: number; message: Uint8Array } | { id: number; error: string };

const signer = dkimSigner();

// No stack traces in this thread: an error leaves it as its message alone. Node's stream.pipeline
// aborts an AbortController as each pipeline ends, and that abort builds a DOMException with a
// stack; nodemailer's composer runs several pipelines a message. Their stacks were a tenth of
// composing a 4 KB message (about 40 of 400 µs here).
Error.stackTraceLimit = 0;

parentPort?.on('message', (request: SignRequest) => {
  void (async () => {
    try {
      const attachments = request.attachments.map((a) => ({ ...a, content: Buffer.from(a.content) }));
      const message = signer.sign(await composeMessage(request.email, attachments, request.tracking), request.key, new Date(request.at));
      const copy = new Uint8Array(message);
      parentPort!.postMessage({ id: request.id, message: copy } satisfies SignReply, [copy.buffer]);
    } catch (err) {
      parentPort!.postMessage({ id: request.id, error: (err as Error).message } satisfies SignReply);
    }
  })();
});
