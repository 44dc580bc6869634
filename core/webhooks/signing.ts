import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

// Standard Webhooks signing through its own library. The spec writes the header prefix as `wh-`;
// receivers in the wild read `webhook-` (the Standard Webhooks libraries) or `svix-` (the hosted
// API's receivers and its SDK's verify). Every request carries the three sets with the same values,
// so each existing receiver verifies without a change.

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

/** The header prefixes every request is signed under, the spec's own first. */
export const HEADER_PREFIXES = ['wh', 'webhook', 'svix'] as const;
type Prefix = (typeof HEADER_PREFIXES)[number];

export type SignedHeaders = { [K in `${Prefix}-${'id' | 'timestamp' | 'signature'}`]: string };

/**
 * Headers for one request: every secret signs `id.timestamp.body` (the current one first, then a
 * rotated-out one still inside its overlap), space-separated `v1,<base64>` entries.
 */
export function signRequest(secrets: readonly string[], messageId: string, at: Date, body: string): SignedHeaders {
  const signature = secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' ');
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const headers: Partial<SignedHeaders> = {};
  for (const prefix of HEADER_PREFIXES) {
    headers[`${prefix}-id`] = messageId;
    headers[`${prefix}-timestamp`] = timestamp;
    headers[`${prefix}-signature`] = signature;
  }
  return headers as SignedHeaders;
}
