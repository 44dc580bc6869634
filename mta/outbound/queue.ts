import type { Clock } from '../../core/clock.js';
import type { DeliveryRecorder, Known } from '../../core/emails/index.js';
import { releaseDueScheduled } from '../../core/emails/index.js';
import type { DeliveryOutcome } from '../../core/emails/index.js';
import type { ReturnPaths } from '../../core/emails/index.js';
import type { AttemptTraceLine } from '../../core/emails/index.js';
import type { Logger } from '../../core/logger.js';
import type { OpsMetrics } from '../../core/ops-metrics.js';
import type { Region } from '../../core/regions.js';
import type { SuppressionsRepo } from '../../core/suppressions/index.js';
import type { Db } from '../../storage/sql/index.js';
import { nextDueAt, suppressedAmong } from '../../storage/repos/index.js';
import type { EmailRecipientRow } from '../../storage/repos/index.js';
import { relayText, reportAttempt, type AttemptLine } from './attempt-report.js';
import type { QueueClaims } from './claims.js';
import { attemptDelivery, type Relay } from './deliver.js';
import type { PreparedMessage } from './messages.js';
import type { Route } from './routes.js';
import type { SessionPool } from './session-pool.js';
import { simulate } from './simulator.js';
import type { StsLookup } from './mta-sts.js';
import { applyStsPolicy, resultUnderPolicy } from './sts-route.js';
import type { TlsReportCounter } from './tls-report-counter.js';

// One region's outbound queue: claims due recipients under a lease (claims.ts: several processes
// may serve a region, each attempt's writes are fenced by its claim), keeps at most `concurrency`
// deliveries in flight and `perDomainConnections` per destination domain (its own count, and the
// region's across processes in Redis), and wakes on a push (new mail), on its own timer (the next
// due retry or scheduled send), on the lease tick, or on the slow safety poll.

export interface QueueDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  recorder: DeliveryRecorder;
  suppressions: SuppressionsRepo;
  /** The message for one recipient (its own when its email is tracked). */
  messageFor(emailId: string, recipientIdx: number): Promise<PreparedMessage | undefined>;
  route(domain: string, tls: 'opportunistic' | 'enforced'): Promise<Route>;
  pool: SessionPool;
  returnPaths: Pick<ReturnPaths, 'address'>;
  simulatorDomain: string;
  pollMs: number;
  wake(region: string): void;
  metrics: OpsMetrics;
  /** Each attempt's report for `svc admin trace` (bin/attempt-trace.ts: here, or through Redis). */
  trace?: (line: AttemptTraceLine) => void;
  /** The recipient domain's MTA-STS policy (mta-sts.ts); absent: MTA-STS off (or a smarthost). */
  mtaSts?: (domain: string) => Promise<StsLookup>;
  /** TLS-RPT counts of sessions under a policy. */
  tlsReport?: TlsReportCounter;
  /** This process's leases and slots (its node id). */
  claims: QueueClaims;
  /** How often held leases are renewed and lapsed submissions looked for (a third of the lease). */
  leaseTickMs: number;
}

/** One attempt's outcome with what the attempt log reports of it. */
interface Attempted {
  outcome: DeliveryOutcome;
  complaint: boolean;
  known?: Known;
  relay?: Relay | null;
  acceptedAt?: string;
}

interface Buffered {
  row: EmailRecipientRow;
  /** Suppression origin, when the team suppresses the address. */
  listed: string | undefined;
}

export class RegionQueue {
  private readonly inflight = new Map<string, Promise<void>>();
  /** Rows whose SMTP transaction is running: they hold a connection and a destination slot. */
  private readonly inflightRows = new Map<string, EmailRecipientRow>();
  /** Due rows read ahead, claimed under this process's lease (renewed on the lease tick). */
  private buffer: Buffered[] = [];
  private readonly perDomain = new Map<string, number>();
  private pumping = false;
  private again = false;
  private releaseWanted = true;
  private timer?: NodeJS.Timeout;
  private leaseTimer?: NodeJS.Timeout;
  private ticking = false;
  private stopped = false;
  private readonly log: Logger;

  constructor(readonly region: Region, private readonly deps: QueueDeps) {
    this.log = deps.logger.child({ region: region.name, node: deps.claims.node });
    this.leaseTimer = setInterval(() => void this.leaseTick(), deps.leaseTickMs);
    this.leaseTimer.unref();
  }

  /** New mail (or a due time): look now, dispatching scheduled mail too. */
  wake(): void {
    this.releaseWanted = true;
    this.schedulePump();
  }

  get inFlight(): number {
    return this.inflight.size;
  }

  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    const unattempted = this.buffer.map((b) => b.row.id).filter((id) => !this.inflight.has(id));
    this.buffer = [];
    clearTimeout(this.timer);
    clearInterval(this.leaseTimer);
    await this.deps.claims.release(unattempted)
      .catch((err: unknown) => this.log.warn({ err }, 'claimed recipients not given back: another process takes them after the lease'));
    const all = Promise.allSettled([...this.inflight.values()]);
    await Promise.race([all, new Promise((r) => setTimeout(r, graceMs).unref())]);
  }

  private schedulePump(): void {
    if (this.stopped) return;
    if (this.pumping) { this.again = true; return; }
    setImmediate(() => void this.pump());
    this.pumping = true;
  }

  private async pump(): Promise<void> {
    let started = 0;
    try {
      do {
        this.again = false;
        if (this.releaseWanted) {
          this.releaseWanted = false;
          await releaseDueScheduled({ db: this.deps.db, clock: this.deps.clock, logger: this.log, wake: () => undefined });
        }
        started += await this.claim();
      } while (this.again && !this.stopped);
    } catch (err) {
      if (!this.stopped) this.log.error({ err }, 'outbound queue pump failed');
    } finally {
      this.pumping = false;
    }
    await this.arm(started).catch((err: unknown) => { if (!this.stopped) this.log.error({ err }, 'outbound queue timer failed'); });
  }

  /**
   * Starts deliveries up to the region's limits. Due rows are claimed ahead (with their suppression
   * check) into a small buffer, so a finished delivery usually starts the next one without a query.
   */
  private async claim(): Promise<number> {
    const capacity = this.region.concurrency;
    // A delivery whose outcome is being written holds no connection: only transactions count.
    const sending = () => this.inflightRows.size;
    if (this.stopped || sending() >= capacity) return 0;
    if (this.buffer.length < capacity) await this.refill(capacity * 2 - this.buffer.length);
    const picked: Buffered[] = [];
    const deferred: Buffered[] = [];
    const counts = new Map(this.perDomain);
    while (this.buffer.length && sending() + picked.length < capacity && !this.stopped) {
      const next = this.buffer.shift()!;
      if (this.inflight.has(next.row.id)) continue;
      const domainCount = counts.get(next.row.domain) ?? 0;
      if (domainCount >= this.region.perDomainConnections) { deferred.push(next); continue; }
      counts.set(next.row.domain, domainCount + 1);
      picked.push(next);
    }
    // The destination's slots across every process of the region (one Redis call for all).
    const granted = await this.deps.claims.takeSlots(picked.map((b) => b.row), this.region.perDomainConnections);
    let started = 0;
    picked.forEach((next, i) => {
      if (!granted[i] || this.stopped) { deferred.push(next); if (granted[i]) this.deps.claims.releaseSlot(next.row); return; }
      this.start(next);
      started++;
    });
    if (!this.stopped) this.buffer.unshift(...deferred);
    return started;
  }

  /**
   * The destination slot and the concurrency place are given back when the SMTP transaction ends,
   * before its outcome is written: the next delivery's submitting mark then carries that outcome
   * in its transaction (a relaxed write waits for a durable one, storage/sql/group-commit.ts),
   * instead of every place waiting on outcomes that wait for a mark. The row stays in flight (kept
   * from claims, its lease renewed) until its outcome is written.
   */
  private start(next: Buffered): void {
    const row = next.row;
    this.perDomain.set(row.domain, (this.perDomain.get(row.domain) ?? 0) + 1);
    this.inflightRows.set(row.id, row);
    const transactionEnded = () => {
      if (!this.inflightRows.delete(row.id)) return;
      const n = (this.perDomain.get(row.domain) ?? 1) - 1;
      if (n > 0) this.perDomain.set(row.domain, n); else this.perDomain.delete(row.domain);
      this.deps.claims.releaseSlot(row);
      this.schedulePump();
    };
    const work = this.deliver(row, next.listed, transactionEnded).finally(() => {
      this.inflight.delete(row.id);
      transactionEnded();
      this.schedulePump();
    });
    this.inflight.set(row.id, work);
  }

  private async refill(limit: number): Promise<void> {
    const exclude = [...this.inflight.keys(), ...this.buffer.map((b) => b.row.id)];
    const rows = await this.deps.claims.claim(this.region.name, limit, exclude);
    // The suppression list is read again right before sending, for the whole read at once.
    const listed = await suppressedAmong(this.deps.db, rows);
    for (const row of rows) this.buffer.push({ row, listed: listed.get(`${row.team_id}|${row.address.toLowerCase()}`) });
  }

  /**
   * Renews the leases (and slots) this process holds, drops buffered rows another process took
   * after a lapse, makes submissions whose process died ambiguous, then looks for due mail (a dead
   * process's queued rows become claimable when its leases lapse).
   */
  private async leaseTick(): Promise<void> {
    if (this.stopped || this.ticking) return;
    this.ticking = true;
    try {
      const buffered = this.buffer.map((b) => b.row.id);
      const held = [...this.inflight.keys(), ...buffered];
      const kept = await this.deps.claims.renew(held);
      const lost = new Set(buffered.filter((id) => !kept.has(id)));
      if (lost.size) {
        this.buffer = this.buffer.filter((b) => !lost.has(b.row.id));
        this.log.warn({ recipients: lost.size }, 'claimed recipients taken over by another process after their lease lapsed');
      }
      await this.deps.claims.renewSlots([...this.inflightRows.values()]);
      await this.deps.recorder.recoverInterrupted([this.region.name], this.deps.claims.node);
    } catch (err) {
      if (!this.stopped) this.log.error({ err }, 'outbound lease tick failed');
    } finally {
      this.ticking = false;
    }
    this.wake();
  }

  /** Sleeps until the next due time (or the safety poll), unless deliveries in flight will wake it. */
  private async arm(started: number): Promise<void> {
    clearTimeout(this.timer);
    if (this.stopped) return;
    if (this.inflight.size > 0) {
      // Busy: completions re-pump; a short timer still dispatches scheduled mail on time.
      this.timer = setTimeout(() => this.wake(), Math.min(this.deps.pollMs, 1000));
      this.timer.unref();
      return;
    }
    if (this.buffer.length > 0) {
      // Claimed rows wait for a destination slot another process holds: look again soon.
      this.timer = setTimeout(() => this.wake(), 100);
      this.timer.unref();
      return;
    }
    const next = await nextDueAt(this.deps.db, [this.region.name], this.deps.clock.now().toISOString());
    let delay = this.deps.pollMs;
    if (next) {
      const until = Date.parse(next) - this.deps.clock.now().getTime();
      // Due now but nothing could start (all in flight or domain limits): completions re-pump.
      delay = until <= 0 ? (started > 0 || this.inflight.size === 0 ? 50 : this.deps.pollMs) : Math.min(until + 5, this.deps.pollMs);
    }
    this.timer = setTimeout(() => this.wake(), Math.max(delay, 5));
    this.timer.unref();
  }

  private async deliver(row: EmailRecipientRow, listedOrigin: string | undefined, transactionEnded: () => void): Promise<void> {
    const log = this.log.child({ emailId: row.email_id, recipientId: row.id, rcpt: row.address });
    const started = performance.now();
    let attempted: Attempted;
    try {
      attempted = await this.attempt(row, listedOrigin);
    } catch (err) {
      // An internal error defers; it never bounces.
      log.error({ err }, 'delivery attempt failed inside svc');
      attempted = { outcome: { kind: 'deferred', response: `internal error: ${(err as Error).message}`.slice(0, 500), delayType: 'InternalFailure' }, complaint: false };
    }
    transactionEnded();
    const { outcome, complaint, known } = attempted;
    const reported = reportAttempt(log, this.deps.metrics, {
      outcome, relay: attempted.relay ?? null, acceptedAt: attempted.acceptedAt ?? null, attempt: row.attempts + 1,
      domain: row.domain, attemptMs: performance.now() - started, now: this.deps.clock.now(),
    });
    this.deps.trace?.(traceLine(row, reported, this.deps.clock.now()));
    const relay = attempted.relay ? relayText(attempted.relay) : null;
    // The outcome is known; a database hiccup (SQLITE_BUSY under load) must not lose it. The
    // recipient stays in flight until it is written; only a stop gives up (then the row is
    // queued — retried — or submitting — ambiguous at the next start, never resent).
    for (let attempt = 1; ; attempt++) {
      try {
        await this.deps.recorder.record(row.id, outcome, { known, relay, owner: this.deps.claims.node });
        if (complaint) await this.deps.recorder.recordComplaint(row.id, { keepAddress: true });
        return;
      } catch (err) {
        log.error({ err, outcome: outcome.kind, attempt }, 'delivery outcome could not be recorded, retrying');
        if (this.stopped) return;
        await new Promise((r) => setTimeout(r, Math.min(attempt * 200, 5000)));
      }
    }
  }

  /** The route, shaped by the domain's MTA-STS policy; what the policy refused or lacked is counted for TLS-RPT. */
  private async routeFor(domain: string, tls: 'opportunistic' | 'enforced'): Promise<Route> {
    const route = await this.deps.route(domain, tls);
    if (!this.deps.mtaSts || route.kind !== 'targets') return route;
    const shaped = applyStsPolicy(route, await this.deps.mtaSts(domain));
    const counter = this.deps.tlsReport;
    if (counter && shaped.kind === 'temporary' && shaped.sts) for (const host of shaped.unmatched ?? []) counter.count(shaped.sts, host, 'validation-failure');
    if (counter && shaped.kind === 'targets' && shaped.sts && !shaped.sts.policy) counter.count(shaped.sts, '', 'sts-policy-fetch-error');
    return shaped;
  }

  private async attempt(row: EmailRecipientRow, listedOrigin: string | undefined): Promise<Attempted> {
    if (listedOrigin) return { outcome: { kind: 'suppressed', origin: listedOrigin }, complaint: false };
    if (row.domain === this.deps.simulatorDomain) {
      if (!(await this.deps.recorder.markSubmitting(row.id, undefined, this.deps.claims.node))) return lostClaim();
      return simulate(row.address);
    }
    const prepared = await this.deps.messageFor(row.email_id, row.idx);
    if (!prepared) {
      return { outcome: { kind: 'deferred', response: 'the sending domain is not verified for this team any more', delayType: 'InternalFailure' }, complaint: false };
    }
    const known: Known = { row, email: prepared.email, submitted: false };
    const acceptedAt = prepared.email.created_at;
    const route = await this.routeFor(row.domain, prepared.domain.tls);
    const sts = route.kind !== 'no_route' ? route.sts : undefined;
    // Its code and message as thrown: nodemailer relabels the error object (ESTREAM) as it aborts.
    let unrecorded: string | undefined;
    const { outcome, relay } = await attemptDelivery(this.deps.pool, {
      route,
      envelope: { from: this.deps.returnPaths.address(row.id, prepared.domain.returnPathHost, this.deps.clock.now()), to: row.address, envid: row.email_id },
      message: prepared.message,
      observeTls: sts?.policy && this.deps.tlsReport ? (host, result) => this.deps.tlsReport!.count(sts, host, resultUnderPolicy(sts, host, result)) : undefined,
      beforeData: async () => {
        try {
          const ok = await this.deps.recorder.markSubmitting(row.id, known, this.deps.claims.node);
          if (ok) known.submitted = true;
          return ok;
        } catch (err) {
          unrecorded = `${(err as { code?: string }).code ?? 'ERROR'}: ${(err as Error).message}`;
          throw err;
        }
      },
    });
    if (unrecorded !== undefined && outcome.kind === 'deferred') return { outcome: unrecordedAttempt(unrecorded), complaint: false, known, relay, acceptedAt };
    return { outcome, complaint: false, known, relay, acceptedAt };
  }
}

function traceLine(row: EmailRecipientRow, line: AttemptLine, now: Date): AttemptTraceLine {
  return {
    object: 'attempt', at: now.toISOString(), email_id: row.email_id, recipient_id: row.id, team_id: row.team_id, region: row.region,
    rcpt: row.address, domain: row.domain, attempt: line.attempt, status: line.status, relay: line.relay, tls: line.tls,
    reply: line.reply, dsn: line.dsn, delay_s: line.delay, attempt_s: line.attemptSeconds,
  };
}

/** The claim was lost (held, deleted, or taken over after a lapse) before the simulator's submission: nothing happened. */
const lostClaim = (): Attempted => ({ outcome: { kind: 'deferred', response: 'the claim on the recipient was lost before the attempt', delayType: 'InternalFailure' }, complaint: false });

// How soon a recipient is tried again after svc could not record the attempt itself.
const UNRECORDED_RETRY_MS = 10_000;

/**
 * The submitting mark could not be written (disk full, storage error), so no data went out: svc's
 * own hiccup, retried soon rather than on the schedule a remote deferral earns, and not counted.
 */
function unrecordedAttempt(cause: string): DeliveryOutcome {
  return {
    kind: 'deferred', delayType: 'InternalFailure', internalRetryMs: UNRECORDED_RETRY_MS,
    response: `svc could not record the attempt, nothing was sent: ${cause}`.slice(0, 500),
  };
}
