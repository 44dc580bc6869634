import { parentPort, workerData } from 'node:worker_threads';
import { importFiles } from '../../storage/files/index.js';
import type { RecordBatch } from './csv.js';
import { readBatch, type BatchRequest } from './read-batch.js';

// The thread of batch-reader.ts: reads the batches it is asked for, one reply per
// request, with a read error sent back (its message and code) for the step to retry.

export interface ReaderThreadData {
  filesDir: string;
}

export interface ReaderRequest {
  id: number;
  request: BatchRequest;
}

export type ReaderReply =
  | { id: number; batch: RecordBatch }
  | { id: number; failure: { message: string; code?: string } };

const files = importFiles((workerData as ReaderThreadData).filesDir);

parentPort?.on('message', (message: ReaderRequest) => {
  readBatch(files, message.request).then(
    (batch) => parentPort?.postMessage({ id: message.id, batch } satisfies ReaderReply),
    (err: NodeJS.ErrnoException) => parentPort?.postMessage({
      id: message.id, failure: { message: String(err?.message ?? err), ...(err?.code ? { code: err.code } : {}) },
    } satisfies ReaderReply),
  );
});
