import type { Db } from '../../storage/sql/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { webhooksRepo, type DeliveryPatch, type WebhookAttemptRow, type WebhookDeliveryRow } from '../../storage/repos/index.js';

/** One finished attempt: its record, the message's new state, and what else it implies. */
export interface Completion {
  attempt: WebhookAttemptRow;
  messageId: string;
  endpointId: string;
  teamId: string;
  patch: DeliveryPatch;
  /** The endpoint answered 410: disable it and fail what waits for it. */
  gone: boolean;
  /** Claim the endpoint's next due message in the same transaction (for the slot just freed). */
  claimNext: boolean;
  at: Date;
}

export interface AttemptRecorder {
  /** Resolves once the attempt is committed, with the next message claimed for its slot (if asked). */
  record(completion: Completion): Promise<WebhookDeliveryRow[]>;
}

/**
 * Group commit for attempt records. Every commit costs an fsync (synchronous=FULL), which also
 * stalls the event loop; attempts that finish while one transaction is being written go together
 * in the next. No timer: a lone attempt is written at once, so nothing waits for a batch to fill.
 */
export function attemptRecorder(db: Db, owner: string, leaseMs: number): AttemptRecorder {
  type Pending = { completion: Completion; resolve: (next: WebhookDeliveryRow[]) => void; reject: (err: unknown) => void };
  let queue: Pending[] = [];
  let scheduled = false;

  async function flush(): Promise<void> {
    const batch = queue;
    queue = [];
    try {
      const results = await inTransaction(db, async (trx) => {
        const repo = webhooksRepo(trx);
        const out: WebhookDeliveryRow[][] = [];
        for (const { completion: c } of batch) out.push(await write(repo, c));
        return out;
      });
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (err) {
      batch.forEach((p) => p.reject(err));
    }
    if (queue.length > 0) await flush();
    else scheduled = false;
  }

  async function write(repo: ReturnType<typeof webhooksRepo>, c: Completion): Promise<WebhookDeliveryRow[]> {
    const now = c.at.toISOString();
    await repo.insertAttempt(c.attempt);
    await repo.finishClaimed(c.messageId, owner, c.patch);
    if (c.gone) {
      await repo.updateEndpoint(c.teamId, c.endpointId, { status: 'disabled', disabled_reason: 'gone', updated_at: now });
      await repo.failWaiting(c.endpointId, 'endpoint disabled', now);
      return [];
    }
    // Due messages only: lapsed claims are the periodic sweep's, not worth a query per delivery.
    return c.claimNext ? repo.claim(c.endpointId, now, owner, new Date(c.at.getTime() + leaseMs).toISOString(), 1, true) : [];
  }

  return {
    record(completion) {
      return new Promise((resolve, reject) => {
        queue.push({ completion, resolve, reject });
        if (scheduled) return;
        scheduled = true;
        // After the current I/O callbacks, so answers that arrived together are written together.
        setImmediate(() => void flush());
      });
    },
  };
}
