import { Worker } from 'node:worker_threads';
import type { CheckpointWorkerData } from './checkpoint-worker.js';

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Starts the WAL checkpoint thread for a database file (checkpoint-worker.ts). A thread that
 * cannot start or dies leaves checkpoints to SQLite's own threshold on the connections.
 */
export function startCheckpointer(path: string, thresholdBytes = 4 * 1024 * 1024, intervalMs = 200): Checkpointer {
  const data: CheckpointWorkerData = { path, thresholdBytes, intervalMs };
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), { workerData: data });
  worker.unref();
  let exited = false;
  const gone = new Promise<void>((resolve) => worker.once('exit', () => { exited = true; resolve(); }));
  worker.on('error', () => undefined);
  return {
    async stop() {
      if (exited) return;
      // Held while it stops, so that waiting for it keeps the process alive.
      worker.ref();
      worker.postMessage('stop');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([gone, new Promise<void>((resolve) => { timer = setTimeout(resolve, 2000); })]);
      clearTimeout(timer);
      if (!exited) await worker.terminate();
    },
  };
}
