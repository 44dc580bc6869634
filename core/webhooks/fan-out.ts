import type { Db } from '../../storage/sql/index.js';
import { eventsRepo, type StoredEvent } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { webhooksRepo, type WebhookDeliveryRow, type WebhookEndpointRow } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';

export const DISPATCH_CURSOR = 'webhook-dispatch';

/**
 * Reads outbox events after the dispatcher's stored position and turns each into one message per
 * enabled endpoint of its team subscribed to its type — messages and the new position in one
 * transaction, so a crash repeats a batch at worst, and the (endpoint, event) key makes that a no-op.
 * Returns the number of messages created.
 */
export async function fanOut(db: Db, clock: Clock, batchSize = 500): Promise<number> {
  let created = 0;
  for (;;) {
    const result = await inTransaction(db, async (trx) => {
      const repo = webhooksRepo(trx);
      const from = await repo.cursor(DISPATCH_CURSOR);
      const events = await eventsRepo(trx).after(from, batchSize);
      if (events.length === 0) return undefined;
      const endpoints = await repo.enabledEndpointsOf([...new Set(events.map((e) => e.team_id))]);
      const rows = messagesFor(events, endpoints, clock.now().toISOString());
      await repo.insertDeliveries(rows);
      await repo.setCursor(DISPATCH_CURSOR, events[events.length - 1]!.seq);
      return { events: events.length, rows: rows.length };
    });
    if (!result) return created;
    created += result.rows;
    if (result.events < batchSize) return created;
  }
}

function messagesFor(events: StoredEvent[], endpoints: WebhookEndpointRow[], now: string): WebhookDeliveryRow[] {
  const byTeam = new Map<string, { row: WebhookEndpointRow; types: Set<string> }[]>();
  for (const row of endpoints) {
    const list = byTeam.get(row.team_id) ?? [];
    list.push({ row, types: new Set(JSON.parse(row.events) as string[]) });
    byTeam.set(row.team_id, list);
  }
  const out: WebhookDeliveryRow[] = [];
  for (const event of events) {
    for (const { row, types } of byTeam.get(event.team_id) ?? []) {
      if (event.seq <= row.from_seq || !types.has(event.type)) continue;
      out.push({
        id: newId(), team_id: event.team_id, endpoint_id: row.id, event_id: event.id, event_seq: event.seq, event_type: event.type,
        status: 'pending', attempts_made: 0, next_attempt_at: now, lease_until: null, lease_owner: null, replay: 0,
        last_status_code: null, last_error: null, created_at: now, updated_at: now,
      });
    }
  }
  return out;
}
