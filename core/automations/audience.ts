import type { Db } from '../../storage/sql/index.js';
import { segmentsRepo, topicsRepo, type TopicSubscription } from '../../storage/repos/index.js';
import type { ContactView } from '../contacts/index.js';
import { filterContext, parseFilter, segmentsContaining } from '../segments/index.js';
import { effectiveSubscription } from '../topics/index.js';

// A contact's topic subscriptions and segment memberships as they are now, for a flow's condition
// step and its template's show-when rules. Read only when the step names a topic or segment (a
// condition) or always before a template send (show-when is decided in the render): the team's
// topics with the contact's choices, its explicit memberships, and — when the team has filter
// segments — one membership query per 25 of them.

export interface ContactAudience {
  /** Effective subscription per live topic: a global unsubscribe is opt_out of every one. */
  topics: ReadonlyMap<string, TopicSubscription>;
  /** Ids of the live segments the contact is in, by hand or by filter. */
  segments: ReadonlySet<string>;
}

export async function contactAudience(db: Db, teamId: string, contact: Pick<ContactView, 'id' | 'unsubscribed'>): Promise<ContactAudience> {
  const segments = segmentsRepo(db);
  const [topics, explicit, filtered] = await Promise.all([
    topicsRepo(db).allForContact(teamId, contact.id), segments.explicitOf(teamId, contact.id), segments.liveFiltered(teamId),
  ]);
  const member = new Set(explicit);
  if (filtered.length) {
    const parsed = filtered.map(parseFilter);
    for (const id of await segmentsContaining(db, teamId, { id: contact.id }, parsed, await filterContext(db, teamId, parsed))) member.add(id);
  }
  return { topics: new Map(topics.map((t) => [t.id, effectiveSubscription(contact, t, t.choice)])), segments: member };
}
