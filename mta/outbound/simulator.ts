import type { DeliveryOutcome } from '../../core/emails/index.js';
import { fromReply } from './deliver.js';

// The mailbox simulator: addresses at the configured simulator domain are resolved here, with
// the events a real mailbox of that kind would cause, and never leave svc. `+label` is ignored
// (delivered+signup@ behaves as delivered@). Its bounces and complaints never suppress.

export type Simulated = { outcome: DeliveryOutcome; complaint: boolean };

export function simulate(address: string): Simulated {
  const local = address.split('@')[0]!.toLowerCase().split('+')[0];
  switch (local) {
    case 'bounced': {
      const outcome = fromReply('550 5.1.1 The email account that you tried to reach does not exist (mailbox simulator)');
      return { outcome: outcome.kind === 'bounced' ? { ...outcome, keepAddress: true } : outcome, complaint: false };
    }
    case 'complained':
      return { outcome: { kind: 'delivered', response: '250 2.0.0 delivered (mailbox simulator)' }, complaint: true };
    case 'suppressed':
      return { outcome: { kind: 'suppressed', origin: 'bounce' }, complaint: false };
    default:
      return { outcome: { kind: 'delivered', response: '250 2.0.0 delivered (mailbox simulator)' }, complaint: false };
  }
}
