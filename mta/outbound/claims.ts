import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { Db } from '../../storage/sql/index.js';
import { inRelaxedWriteTransaction } from '../../storage/sql/index.js';
import { claimDueRecipients, releaseDeadLeases, releaseRecipientLeases, renewRecipientLeases } from '../../storage/repos/index.js';
import type { EmailRecipientRow } from '../../storage/repos/index.js';
import type { DestinationSlots, SlotRequest } from '../../storage/redis/index.js';

// What one outbound process holds of a region's queue when several serve it (on one box or on
// several, sharing the database and Redis): the recipients it claimed, each under a lease with
// its node id that it renews while it holds them, and the per-destination connection slots in
// Redis its deliveries take. A process that dies stops renewing both: its queued recipients are
// claimed by another after the lease, its slots lapse after the same time.

export interface ClaimsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** This process's node id: the owner its leases and slots carry. */
  node: string;
  leaseMs: number;
  /** The shared slots; absent (or Redis away): the limit is this process's alone. */
  slots?: DestinationSlots;
}

export class QueueClaims {
  private slotsFailedAt = 0;

  constructor(private readonly deps: ClaimsDeps) {}

  get node(): string {
    return this.deps.node;
  }

  private lease() {
    return { owner: this.deps.node, until: new Date(this.deps.clock.now().getTime() + this.deps.leaseMs).toISOString() };
  }

  /** Due queued recipients of the region nobody else holds, now this process's. */
  claim(region: string, limit: number, exclude: readonly string[]): Promise<EmailRecipientRow[]> {
    const now = this.deps.clock.now().toISOString();
    const lease = this.lease();
    // Relaxed: a claim lost in a crash costs nothing (the row stays free, or its lease lapses).
    return inRelaxedWriteTransaction(this.deps.db, (trx) => claimDueRecipients(trx, [region], now, lease, limit, exclude));
  }

  /** Renews the leases on these recipients; answers those still held (another process may have taken one after a lapse). */
  async renew(ids: readonly string[]): Promise<Set<string>> {
    const lease = this.lease();
    const kept = new Set<string>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      for (const id of await inRelaxedWriteTransaction(this.deps.db, (trx) => renewRecipientLeases(trx, chunk, lease))) kept.add(id);
    }
    return kept;
  }

  /** Gives back queued recipients this process will not attempt (it stops): others take them at once. */
  async release(ids: readonly string[]): Promise<void> {
    if (ids.length) await inRelaxedWriteTransaction(this.deps.db, (trx) => releaseRecipientLeases(trx, ids, this.deps.node));
  }

  /**
   * Frees at once what processes known dead held (the predecessors on this data folder, whose
   * locks this process took over): their queued recipients and their destination slots.
   */
  async forgetDead(regions: readonly string[], dead: readonly string[]): Promise<void> {
    if (dead.length === 0) return;
    const freed = await inRelaxedWriteTransaction(this.deps.db, (trx) => releaseDeadLeases(trx, regions, dead));
    let slots = 0;
    for (const region of regions) slots += await this.deps.slots?.releaseNodes(region, dead).catch(() => 0) ?? 0;
    this.deps.logger.info({ dead, recipients: freed, slots }, 'claims of a dead predecessor freed');
  }

  private slot(row: EmailRecipientRow): SlotRequest {
    return { region: row.region, domain: row.domain, holder: `${this.deps.node}|${row.id}` };
  }

  /**
   * A connection slot at each row's destination, across every process of the region. Without
   * Redis the process's own count (checked by the caller) is the limit: mail keeps flowing.
   */
  async takeSlots(rows: readonly EmailRecipientRow[], limit: number): Promise<boolean[]> {
    if (!this.deps.slots || rows.length === 0) return rows.map(() => true);
    try {
      return await this.deps.slots.acquire(rows.map((r) => this.slot(r)), limit, this.deps.leaseMs);
    } catch (err) {
      this.slotsUnavailable(err);
      return rows.map(() => true);
    }
  }

  releaseSlot(row: EmailRecipientRow): void {
    this.deps.slots?.release(this.slot(row)).catch((err: unknown) => this.slotsUnavailable(err));
  }

  async renewSlots(rows: readonly EmailRecipientRow[]): Promise<void> {
    await this.deps.slots?.renew(rows.map((r) => this.slot(r)), this.deps.leaseMs).catch((err: unknown) => this.slotsUnavailable(err));
  }

  private slotsUnavailable(err: unknown): void {
    const now = Date.now();
    if (now - this.slotsFailedAt < 30_000) return;
    this.slotsFailedAt = now;
    this.deps.logger.warn({ err }, 'shared destination slots unavailable (Redis): this process limits its own connections alone');
  }
}
