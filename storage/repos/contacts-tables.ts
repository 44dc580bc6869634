// Row types of the audience tables (migration 012). Kept beside the repos; tables.ts lists them.

export type SubscriptionStatus = 'subscribed' | 'unsubscribed' | 'never_subscribed';
/** How the contact came to be: `sends` ones (rule 4) are not counted toward the contact limit. */
export type ContactOrigin = 'api' | 'import' | 'sends';
export type PropertyType = 'string' | 'number' | 'boolean';
export type TopicSubscription = 'opt_in' | 'opt_out';

export interface ContactRow {
  id: string;
  team_id: string;
  /** The address as last given (trimmed). */
  email: string;
  /** The whole address lower-cased: lookups and the per-team uniqueness compare this. */
  email_key: string;
  first_name: string | null;
  last_name: string | null;
  /** The one truth; `unsubscribed` on the wire is status = 'unsubscribed'. */
  subscription_status: SubscriptionStatus;
  origin: ContactOrigin;
  created_at: string;
  updated_at: string;
}

export interface ContactPropertyRow {
  id: string;
  team_id: string;
  key: string;
  /** The key lower-cased: unique per team (keys are merge variables, which ignore case). */
  key_fold: string;
  type: PropertyType;
  /** JSON of the fallback value, or null. */
  fallback_value: string | null;
  created_at: string;
}

export interface ContactPropertyValueRow {
  contact_id: string;
  key: string;
  team_id: string;
  /** A string property's value. */
  text_value: string | null;
  /** A number property's value, or a boolean's as 0/1. */
  num_value: number | null;
}

export interface ContactTopicRow {
  contact_id: string;
  topic_id: string;
  team_id: string;
  subscription: TopicSubscription;
  updated_at: string;
}

export type ConsentKind = 'subscription' | 'topic' | 'erasure';
/** `one_click`: the List-Unsubscribe one-click POST (RFC 8058) or the unsubscribe link's button. */
export type ConsentSourceName = 'api' | 'import' | 'preference_page' | 'sends' | 'one_click' | 'automation';

export interface ConsentRecordRow {
  id: string;
  team_id: string;
  /** Null once the contact is erased. */
  contact_id: string | null;
  /** HMAC-SHA256 (hex) of the lower-cased address; never the address itself. */
  email_hash: string;
  kind: ConsentKind;
  topic_id: string | null;
  /** The new subscription_status, the topic choice, or `erased`. */
  value: string;
  source: ConsentSourceName;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
}

export interface PlatformEventRow {
  id: string;
  team_id: string;
  /** svc:contact.created, svc:topic.subscribed, svc:topic.unsubscribed, … */
  type: string;
  contact_id: string | null;
  /** JSON. */
  data: string;
  created_at: string;
}

export interface TopicRow {
  id: string;
  team_id: string;
  name: string;
  /** The name trimmed and lower-cased: unique among the team's live topics. */
  name_key: string;
  description: string | null;
  default_subscription: TopicSubscription;
  visibility: 'public' | 'private';
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}
