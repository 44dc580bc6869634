import type { EmailRow } from '../../storage/repos/index.js';

// `data` of every email.* event (spec Events, Envelope): email_id, from, to, subject, message_id,
// created_at (the email's own), tags and headers when the email had them, plus the event's key.
// For per-recipient events `to` lists only the recipients concerned.

export type EnvelopeSource = Pick<EmailRow, 'id' | 'from_header' | 'to_json' | 'subject' | 'message_id' | 'created_at' | 'tags_json' | 'headers_json' | 'broadcast_id'>;

export function envelopeData(email: EnvelopeSource, to?: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  const data: Record<string, unknown> = {
    email_id: email.id,
    from: email.from_header,
    to: to ?? toAddresses(email),
    subject: email.subject,
    message_id: email.message_id,
    created_at: email.created_at,
  };
  // Every email.* event of a broadcast's email names it (spec Events; the metrics rollup reads it).
  if (email.broadcast_id) data.broadcast_id = email.broadcast_id;
  if (email.tags_json) {
    const tags = JSON.parse(email.tags_json) as { name: string; value: string }[];
    data.tags = Object.fromEntries(tags.map((t) => [t.name, t.value]));
  }
  if (email.headers_json) {
    const headers = JSON.parse(email.headers_json) as Record<string, string>;
    data.headers = Object.entries(headers).map(([name, value]) => ({ name, value }));
  }
  return { ...data, ...extra };
}

/** The bare addresses of the email's `to` field. */
export function toAddresses(email: Pick<EmailRow, 'to_json'>): string[] {
  return (JSON.parse(email.to_json) as { address: string }[]).map((m) => m.address);
}
