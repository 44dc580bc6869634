import { Resend } from 'resend';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../core/clock.js';
import type { ReceivedRequest } from './webhook-receiver.js';
import { atClockTime } from './test-clock.js';

const sdk = new Resend('re_verify_only');

/**
 * Verifies a delivered request the two ways a receiver would: the `standardwebhooks` package (our
 * `wh-*` headers under its `webhook-*` names) and the resend SDK's `webhooks.verify`. Both check the
 * timestamp against "now", read here from the appliance's clock. Returns the parsed payload;
 * throws when either refuses.
 */
export function verifyDelivery(secret: string, req: ReceivedRequest, clock: Clock): any {
  return atClockTime(clock, () => {
    const viaLibrary = new Webhook(secret).verify(req.body, {
      'webhook-id': req.headers['wh-id'] ?? '',
      'webhook-timestamp': req.headers['wh-timestamp'] ?? '',
      'webhook-signature': req.headers['wh-signature'] ?? '',
    });
    const viaSdk = sdk.webhooks.verify({
      payload: req.body,
      headers: { id: req.headers['wh-id'] ?? '', timestamp: req.headers['wh-timestamp'] ?? '', signature: req.headers['wh-signature'] ?? '' },
      webhookSecret: secret,
    });
    if (JSON.stringify(viaLibrary) !== JSON.stringify(viaSdk)) throw new Error('the two verifiers disagree');
    return viaLibrary;
  });
}

/** True when `secret` verifies the request (either verifier refusing counts as false). */
export function verifies(secret: string, req: ReceivedRequest, clock: Clock): boolean {
  try {
    verifyDelivery(secret, req, clock);
    return true;
  } catch {
    return false;
  }
}
