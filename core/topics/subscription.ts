import type { TopicSubscription } from '../../storage/repos/index.js';

/**
 * Whether a contact receives a topic's broadcasts (spec Topic): a global unsubscribe wins over
 * every topic; else the contact's own choice where it made one; else the topic's default.
 */
export function effectiveSubscription(
  contact: { unsubscribed: boolean },
  topic: { default_subscription: TopicSubscription },
  choice: TopicSubscription | null | undefined,
): TopicSubscription {
  if (contact.unsubscribed) return 'opt_out';
  return choice ?? topic.default_subscription;
}
