import { Worker } from 'node:worker_threads';
import type { RecordBatch } from './csv.js';
import type { BatchRequest } from './read-batch.js';
import type { ReaderReply, ReaderRequest, ReaderThreadData } from './reader-thread.js';

// An import's records read on a thread of their own (reader-thread.ts), one batch ahead: while
// a step writes its rows, the next step's are parsed. The CSV parser and its stream were about a
// sixth of the importing thread's time, beside SQLite's writes that only that thread can do. The
// thread loads the parser and the file reader only, to keep its heap small; the rows are checked
// by the step.
// At most one batch is held ahead per import; a step that asks for another offset (a retry after a
// failed commit, another owner's cursor) drops it. The thread ends when nothing is asked of it and
// starts again on the next request.

export interface BatchReader {
  /** The batch at `request`; starts reading the one after it. */
  read(request: BatchRequest): Promise<RecordBatch>;
  /** Ends the thread; a read after this starts it again. */
  close(): Promise<void>;
}

/** A read error in the thread (the disk), thrown to the step for a retry. */
class BatchReadError extends Error {
  constructor(message: string, readonly code: string | undefined) {
    super(message);
  }
}

interface Ahead {
  offset: number;
  batch: Promise<RecordBatch>;
}

export function threadedBatchReader(filesDir: string): BatchReader {
  const data: ReaderThreadData = { filesDir };
  let thread: ReaderThread | undefined;
  const ahead = new Map<string, Ahead>();
  const threadOf = () => (thread ??= readerThread(data, (gone) => {
    if (thread === gone) thread = undefined;
  }));
  const endIfIdle = () => {
    if (ahead.size === 0 && thread?.idle()) void closeThread();
  };
  const closeThread = async () => {
    const ending = thread;
    thread = undefined;
    await ending?.end();
  };
  const readAhead = (request: BatchRequest, batch: RecordBatch) => {
    if (batch.ended || batch.error !== undefined) return;
    const next = { ...request, offset: batch.nextOffset };
    const pending = threadOf().ask(next);
    // Read by the next step, or dropped: a failure here is the next step's to see.
    pending.catch(() => undefined);
    ahead.set(request.importId, { offset: next.offset, batch: pending });
  };
  return {
    async read(request) {
      const held = ahead.get(request.importId);
      ahead.delete(request.importId);
      const batch = await (held?.offset === request.offset ? held.batch : threadOf().ask(request));
      readAhead(request, batch);
      endIfIdle();
      return batch;
    },
    async close() {
      ahead.clear();
      await closeThread();
    },
  };
}

interface ReaderThread {
  ask(request: BatchRequest): Promise<RecordBatch>;
  /** No request is waiting for its reply. */
  idle(): boolean;
  end(): Promise<void>;
}

function readerThread(data: ReaderThreadData, onGone: (gone: ReaderThread) => void): ReaderThread {
  const worker = new Worker(new URL('./reader-thread.js', import.meta.url), { workerData: data });
  // A thread waiting for requests does not keep the process alive; one reading does (ref below).
  worker.unref();
  const waiting = new Map<number, { resolve(batch: RecordBatch): void; reject(err: Error): void }>();
  let nextId = 1;
  let ending = false;
  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on('message', (reply: ReaderReply) => {
    const w = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (waiting.size === 0 && !ending) worker.unref();
    if ('batch' in reply) w?.resolve(reply.batch);
    else w?.reject(new BatchReadError(reply.failure.message, reply.failure.code));
  });
  worker.on('error', (err) => failAll(err));
  worker.once('exit', () => {
    onGone(self);
    failAll(new BatchReadError('The import reader thread stopped.', undefined));
  });
  const self: ReaderThread = {
    ask(request) {
      const id = nextId++;
      worker.ref();
      worker.postMessage({ id, request } satisfies ReaderRequest);
      return new Promise<RecordBatch>((resolve, reject) => waiting.set(id, { resolve, reject }));
    },
    idle: () => waiting.size === 0,
    async end() {
      // Held while it ends (a reply arriving meanwhile leaves it held), so that waiting for it
      // keeps the process alive.
      ending = true;
      worker.ref();
      await worker.terminate();
    },
  };
  return self;
}
