import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

// Standard Webhooks signing through its own library; only the header names are ours
// (`wh-id`, `wh-timestamp`, `wh-signature`, as the spec writes them).

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

export type SignedHeaders = {
  'wh-id': string;
  'wh-timestamp': string;
  'wh-signature': string;
};

/**
 * Headers for one request: every secret signs `id.timestamp.body` (the current one first, then a
 * rotated-out one still inside its overlap), space-separated `v1,<base64>` entries.
 */
export function signRequest(secrets: readonly string[], messageId: string, at: Date, body: string): SignedHeaders {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(messageId, at, body));
  return { 'wh-id': messageId, 'wh-timestamp': String(Math.floor(at.getTime() / 1000)), 'wh-signature': signatures.join(' ') };
}
