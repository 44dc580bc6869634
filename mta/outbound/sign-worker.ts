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
