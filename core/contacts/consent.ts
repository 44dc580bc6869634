import { createHmac, createSecretKey } from 'node:crypto';
import type { Db } from '../../storage/sql/index.js';
import { consentRepo, type ConsentKind, type ConsentSourceName } from '../../storage/repos/index.js';
import { newId } from '../ids.js';

// Rule 2: every change of a contact's subscription and every topic choice writes a consent
// record (source and time; IP address and user agent where there was a request), kept three
// years. Records never hold the address: they hold an HMAC of it, so after erasure an opt-out
// is still provable by whoever holds the appliance's secret.key (derive the key, hash the
// address, look it up), while a copy of the database alone cannot be reversed with a dictionary.

/** Where a change came from, and the request that made it when there was one. */
export interface ConsentContext {
  source: ConsentSourceName;
  ip: string | null;
  userAgent: string | null;
}

/** HMAC-SHA256 (hex) of a lower-cased address under the appliance's consent key. */
export type ConsentHasher = (emailKey: string) => string;

/** The key is `secretBox.derive('consent v1')`. */
export function consentHasher(key: Buffer): ConsentHasher {
  // The key made a KeyObject once: handed the raw bytes, createHmac made one per call (~10 µs).
  const secret = createSecretKey(key);
  return (emailKey) => createHmac('sha256', secret).update(emailKey, 'utf8').digest('hex');
}

export interface ConsentEntry {
  teamId: string;
  contactId: string | null;
  emailHash: string;
  kind: ConsentKind;
  topicId?: string | null;
  /** The new subscription_status, the topic choice, or `erased`. */
  value: string;
  at: string;
}

/** Writes one record in the caller's transaction. */
export async function recordConsent(trx: Db, context: ConsentContext, entry: ConsentEntry): Promise<void> {
  await consentRepo(trx).insert({
    id: newId(), team_id: entry.teamId, contact_id: entry.contactId, email_hash: entry.emailHash, kind: entry.kind,
    topic_id: entry.topicId ?? null, value: entry.value, source: context.source,
    ip: context.ip ? context.ip.slice(0, 64) : null, user_agent: context.userAgent ? context.userAgent.slice(0, 512) : null, created_at: entry.at,
  });
}
