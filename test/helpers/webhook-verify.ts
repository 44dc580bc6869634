import { Resend } from 'resend';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import type { Clock } from '../../core/clock.js';
import type { ReceivedRequest } from './webhook-receiver.js';
import { atClockTime } from './test-clock.js';

const sdk = new Resend('re_verify_only');
const FIELDS = ['id', 'timestamp', 'signature'] as const;

/** Only the headers under one prefix, so a verifier cannot fall back to another set. */
const headersUnder = (req: ReceivedRequest, prefix: string): Record<string, string> =>
  Object.fromEntries(FIELDS.map((f) => [`${prefix}-${f}`, req.headers[`${prefix}-${f}`] ?? '']));

/**
 * Verifies a delivered request the ways receivers in the wild do, each library fed the headers as
 * they arrived and unchanged: `standardwebhooks` reads `webhook-*`, `svix` reads `svix-*`, and the
 * resend SDK's `webhooks.verify` is handed the `svix-*` values. The spec's `wh-*` must carry the same
 * values. Every verifier checks the timestamp against "now", read here from the appliance's clock.
 * Returns the parsed payload; throws when any of them refuses.
 */
export function verifyDelivery(secret: string, req: ReceivedRequest, clock: Clock): any {
  for (const f of FIELDS) {
    for (const prefix of ['webhook', 'svix']) {
      if (req.headers[`${prefix}-${f}`] !== req.headers[`wh-${f}`]) throw new Error(`${prefix}-${f} differs from wh-${f}`);
    }
  }
  return atClockTime(clock, () => {
    const viaLibrary = new StandardWebhook(secret).verify(req.body, headersUnder(req, 'webhook'));
    new SvixWebhook(secret).verify(req.body, headersUnder(req, 'svix'));
    const svix = headersUnder(req, 'svix');
    const viaSdk = sdk.webhooks.verify({
      payload: req.body,
      headers: { id: svix['svix-id']!, timestamp: svix['svix-timestamp']!, signature: svix['svix-signature']! },
      webhookSecret: secret,
    });
    if (JSON.stringify(viaLibrary) !== JSON.stringify(viaSdk)) throw new Error('the verifiers disagree');
    return viaLibrary;
  });
}

/** True when `secret` verifies the request (any verifier refusing counts as false). */
export function verifies(secret: string, req: ReceivedRequest, clock: Clock): boolean {
  try {
    verifyDelivery(secret, req, clock);
    return true;
  } catch {
    return false;
  }
}
