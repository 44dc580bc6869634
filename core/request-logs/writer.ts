import type { ApiKeysRepo } from '../../storage/repos/index.js';
import type { RequestLogsRepo } from '../../storage/repos/index.js';
import type { RequestLogRow } from '../../storage/sql/index.js';
import type { Logger } from '../logger.js';

/**
 * Request logs and keys' last-used times are written in batches, off the request path: one
 * transaction every `flushMs` instead of one fsync per request. A crash loses at most that window
 * of log lines, never mail.
 */
export class RequestLogWriter {
  private pending: RequestLogRow[] = [];
  private keyUses = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly logs: RequestLogsRepo,
    private readonly keys: ApiKeysRepo,
    private readonly logger: Logger,
    private readonly flushMs: number,
  ) {}

  add(row: RequestLogRow): void {
    this.pending.push(row);
    if (row.api_key_id) this.keyUses.set(row.api_key_id, row.created_at);
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Writes everything added so far; resolves when it is committed. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.pending;
    const uses = this.keyUses;
    this.pending = [];
    this.keyUses = new Map();
    this.flushing = this.flushing.then(() => this.write(rows, uses));
    return this.flushing;
  }

  private async write(rows: RequestLogRow[], uses: Map<string, string>): Promise<void> {
    try {
      await this.logs.insertMany(rows);
      await this.keys.touchLastUsed(uses);
    } catch (err) {
      this.logger.error({ err, rows: rows.length }, 'request log batch not written');
    }
  }
}
