import { performance } from 'node:perf_hooks';

// The minimum DATA rate (Postfix: smtpd_min_data_rate). The idle timeout alone does not bound a
// message: every byte resets it, so a client trickling one byte a minute could hold a session,
// its spool file and its share of the in-flight budget forever. Once the grace period has passed,
// a client whose average rate is below the minimum is cut off (./data answers 421 4.4.2).
// Only the time svc waited for the client counts: while svc itself writes to a slow disk the
// client is held back by TCP, and that is not its fault.

export interface DataRateLimits {
  /** Slowest average rate allowed, in bytes per second; 0: no minimum. */
  minBytesPerSecond: number;
  /** Client time before the rate is judged. */
  graceMs: number;
}

export class DataRate {
  private bytes = 0;
  private waitedMs = 0;
  private since: number | undefined;

  constructor(private readonly limits: DataRateLimits) {}

  /** svc now waits for the next bytes of the client. */
  waiting(): void {
    this.since ??= performance.now();
  }

  /** Bytes arrived; svc works on them until the next waiting(). */
  received(bytes: number): void {
    if (this.since !== undefined) this.waitedMs += performance.now() - this.since;
    this.since = undefined;
    this.bytes += bytes;
  }

  /** Client time so far, in milliseconds. */
  get clientMs(): number {
    return this.waitedMs + (this.since === undefined ? 0 : performance.now() - this.since);
  }

  get totalBytes(): number {
    return this.bytes;
  }

  /** True once the grace period has passed and the client sends slower than the minimum. */
  tooSlow(): boolean {
    if (this.limits.minBytesPerSecond <= 0) return false;
    const ms = this.clientMs;
    return ms > this.limits.graceMs && this.bytes * 1000 < this.limits.minBytesPerSecond * ms;
  }
}
