import { envelopeData, type EnvelopeSource } from '../../core/emails/envelope.js';
import { emitEvent, type EventType } from '../../core/outbox/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import { inTransaction } from '../../storage/sql/index.js';
import { call, type CallResult } from './http.js';

/** GET /emails/metrics; array values are sent as repeated parameters. */
export function getMetrics(baseUrl: string, token: string, query: Record<string, string | string[]> = {}): Promise<CallResult> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  }
  const qs = params.toString();
  return call(baseUrl, 'GET', `/emails/metrics${qs ? `?${qs}` : ''}`, { token });
}

/** An email as the sending code's envelope sees it, without a row in the emails table. */
export function fakeEmail(id = crypto.randomUUID(), to = ['reader@inbox-one.net']): EnvelopeSource {
  return {
    id, from_header: 'Acme <hello@sender.net>', to_json: JSON.stringify(to.map((address) => ({ address }))), subject: 'Hello',
    message_id: `<${id}@sender.net>`, created_at: '2026-01-01T00:00:00.000Z', tags_json: null, headers_json: null,
  };
}

/**
 * Writes one email.* event into the outbox with exactly the data the sending code writes
 * (core/emails/envelope.ts and the extras core/emails/delivery.ts adds), at `at`.
 */
export async function writeEmailEvent(db: Db, teamId: string, type: EventType, email: EnvelopeSource, at: string, extra: Record<string, unknown> = {}): Promise<void> {
  const to = (JSON.parse(email.to_json) as { address: string }[]).map((m) => m.address);
  const data = type === 'email.sent' ? envelopeData(email) : envelopeData(email, [to[0]!], extra);
  await inTransaction(db, (trx) => emitEvent(eventsRepo(trx), teamId, type, data, new Date(at)).then(() => undefined));
}

export const bounceOf = (type: 'Permanent' | 'Transient' | 'Undetermined') => ({
  bounce: { type, subType: type === 'Permanent' ? 'NoEmail' : 'General', message: 'refused', diagnosticCode: ['550 5.1.1 no such user'] },
});

/** The `period` labels and one metric of each row, for compact assertions. */
export const series = (body: any, metric: string): [string, number][] => (body.data as any[]).map((r) => [r.period, r[metric]]);
