import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

// Checkpoints the WAL from a thread of its own. SQLite's automatic checkpoint runs inside whichever
// COMMIT crosses the threshold, on that process's event loop, and writes the pages back and fsyncs
// the database there (a tenth of the outbound process's time in the send benchmark). PASSIVE never
// waits for readers or writers: what it cannot copy now is copied on a later round.

export interface CheckpointWorkerData {
  path: string;
  /** Checkpoint once the WAL holds more than this many bytes. */
  thresholdBytes: number;
  intervalMs: number;
}

const { path, thresholdBytes, intervalMs } = workerData as CheckpointWorkerData;
const db = new BetterSqlite3(path);
db.pragma('busy_timeout = 0');
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)');

function walBytes(): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

const timer = setInterval(() => {
  if (walBytes() < thresholdBytes) return;
  try {
    checkpoint.run();
  } catch {
    // Busy or being closed: the next round tries again, and the connections' own threshold
    // (wal_autocheckpoint) still bounds the WAL should this thread never succeed.
  }
}, intervalMs);

parentPort?.on('message', (message: string) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
