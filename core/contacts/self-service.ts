import type { Db } from '../../storage/sql/index.js';
import { contactsRepo, type ContactRow } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { recordConsent, type ConsentContext, type ConsentHasher } from './consent.js';

// What a contact changes itself through the links in its mail (core/preferences): the global
// unsubscribe and the resubscribe. A consent record like every status change (rule 2), but no
// contact.updated (spec Events: not sent for an unsubscribe on the preference page, and the same
// page's resubscribe is the same kind of change) and no platform event (none is named for it).

export interface SelfServiceDeps {
  clock: Clock;
  hash: ConsentHasher;
}

/** Sets the contact's own subscription in the caller's transaction; answers whether it changed. */
export async function setOwnSubscription(
  trx: Db, deps: SelfServiceDeps, contact: ContactRow, status: 'subscribed' | 'unsubscribed', context: ConsentContext,
): Promise<boolean> {
  if (contact.subscription_status === status) return false;
  const at = deps.clock.now().toISOString();
  await contactsRepo(trx).update(contact.team_id, contact.id, { subscription_status: status, updated_at: at });
  await recordConsent(trx, context, {
    teamId: contact.team_id, contactId: contact.id, emailHash: deps.hash(contact.email_key), kind: 'subscription', value: status, at,
  });
  return true;
}
