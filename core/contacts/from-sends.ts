import type { Db } from '../../storage/sql/index.js';
import { addContactFromSend, contactExists } from '../../storage/repos/index.js';
import { newId } from '../ids.js';
import { recordConsent, type ConsentHasher } from './consent.js';
import { emailKeyOf } from './input.js';

/**
 * Rule 4: a delivered recipient who is not a contact becomes one, `never_subscribed`, origin
 * `sends` (not counted toward the limit). Never a suppressed (bounced, complained, unsubscribed)
 * or erased address, never a change to an existing contact, never a contact.* webhook or
 * platform event; off when the team's audience_from_sends is. Called by the delivery recorder in
 * the transaction that records the delivery: one indexed read when the address is a contact
 * already (the usual case, and the HMAC of the address costs more than the read), else one
 * insert that checks the exclusions, plus a consent record (source `sends`) when it adds one.
 */
export interface AudienceFromSends {
  addDelivered(trx: Db, teamId: string, address: string, at: Date): Promise<boolean>;
}

/** `simulatorDomain`: the mailbox simulator's addresses are test fixtures, never an audience. */
export function audienceFromSends(hash: ConsentHasher, options: { simulatorDomain?: string } = {}): AudienceFromSends {
  const simulatorSuffix = options.simulatorDomain ? `@${options.simulatorDomain.toLowerCase()}` : undefined;
  return {
    async addDelivered(trx, teamId, address, at) {
      const emailKey = emailKeyOf(address);
      if (simulatorSuffix && emailKey.endsWith(simulatorSuffix)) return false;
      if (await contactExists(trx, teamId, emailKey)) return false;
      const emailHash = hash(emailKey);
      const id = newId();
      const iso = at.toISOString();
      if (!(await addContactFromSend(trx, { id, team_id: teamId, email: address.trim(), email_key: emailKey, email_hash: emailHash, at: iso }))) return false;
      await recordConsent(trx, { source: 'sends', ip: null, userAgent: null }, {
        teamId, contactId: id, emailHash, kind: 'subscription', value: 'never_subscribed', at: iso,
      });
      return true;
    },
  };
}
