import { open, type FileHandle } from 'node:fs/promises';

/**
 * Makes what this process committed to the SQLite WAL durable with an fsync run on libuv's thread
 * pool, so the event loop keeps serving SMTP sessions and HTTP requests meanwhile. With
 * synchronous=FULL SQLite would fsync inside COMMIT, on the event loop: a third of the outbound
 * process's time in the send benchmark. Commits made with synchronous=NORMAL write their WAL frames
 * before COMMIT returns; one fsync of the WAL afterwards gives them the guarantee FULL gives.
 *
 * Calls coalesce: while an fsync runs, later callers share the next one (started when it ends), so
 * every caller waits for an fsync that began after its own commit.
 */
export class WalSync {
  private running: Promise<void> | undefined;
  private file: FileHandle | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly walPath: string) {}

  /** Resolves once everything this process wrote to the WAL before the call is on disk. */
  sync(): Promise<void> {
    if (this.next) return this.next;
    if (!this.running) return this.start();
    const next = this.running.catch(() => undefined).then(() => {
      this.next = undefined;
      return this.start();
    });
    this.next = next;
    return next;
  }

  private start(): Promise<void> {
    const run = this.fsyncOnce().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async fsyncOnce(): Promise<void> {
    // The handle is kept: the WAL file stays the same file while this process holds a connection
    // (SQLite removes it only when the last connection closes). A failed fsync reopens once, in case
    // the file was replaced (a restore) — and a second failure is the caller's.
    try {
      this.file ??= await open(this.walPath, 'r');
      await this.file.sync();
    } catch {
      await this.file?.close().catch(() => undefined);
      this.file = await open(this.walPath, 'r');
      await this.file.sync();
    }
  }

  /** Lets the handle go (on close of the database). */
  async close(): Promise<void> {
    await this.file?.close().catch(() => undefined);
    this.file = undefined;
  }
}
