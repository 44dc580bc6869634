import type { Db } from '../../storage/sql/index.js';
import { contactsRepo, platformEventsRepo, type ContactRow } from '../../storage/repos/index.js';
import { validationError } from '../errors.js';
import { emitPlatformEvent } from '../outbox/index.js';
import { topicsRepo } from '../topics/index.js';
import { recordConsent, type ConsentContext, type ConsentHasher } from './consent.js';
import type { TopicChoiceInput } from './input.js';

// A contact's topic choices. Each choice that changes what is stored writes a consent record and
// a platform event (svc:topic.subscribed / svc:topic.unsubscribed); never a contact.* webhook
// (spec Events: not sent for a topic change).

/**
 * Applies checked choices in the caller's transaction. Every topic must be a live topic of the
 * team (else 422 naming it, and the caller's transaction rolls back). Answers how many changed.
 */
export async function applyTopicChoices(
  trx: Db, contact: ContactRow, choices: readonly TopicChoiceInput[], context: ConsentContext, hash: ConsentHasher, at: Date, path = 'topics',
): Promise<number> {
  if (choices.length === 0) return 0;
  const live = new Set((await topicsRepo(trx).byIds(contact.team_id, choices.map((c) => c.id))).map((t) => t.id));
  choices.forEach((choice, i) => {
    if (!live.has(choice.id)) throw validationError(422, `${path}[${i}].id`, `Topic \`${choice.id}\` not found.`);
  });
  const repo = contactsRepo(trx);
  const current = new Map((await repo.choices(contact.id)).map((c) => [c.topic_id, c.subscription]));
  const iso = at.toISOString();
  let changed = 0;
  for (const choice of choices) {
    if (current.get(choice.id) === choice.subscription) continue;
    await repo.setChoice({ contact_id: contact.id, topic_id: choice.id, team_id: contact.team_id, subscription: choice.subscription, updated_at: iso });
    await recordConsent(trx, context, {
      teamId: contact.team_id, contactId: contact.id, emailHash: hash(contact.email_key), kind: 'topic', topicId: choice.id, value: choice.subscription, at: iso,
    });
    const type = choice.subscription === 'opt_in' ? 'svc:topic.subscribed' : 'svc:topic.unsubscribed';
    await emitPlatformEvent(platformEventsRepo(trx), contact.team_id, type, contact.id, { contact_id: contact.id, topic_id: choice.id }, at);
    changed++;
  }
  return changed;
}
