import type { PropertyType, TopicSubscription } from './contacts-tables.js';

// Row types of the segment tables (migration 014) and the filter they store. Kept beside the
// repos; tables.ts lists them.

export interface SegmentRow {
  id: string;
  team_id: string;
  name: string;
  /** The name trimmed and lower-cased: unique among the team's live segments. */
  name_key: string;
  /** JSON of the checked filter (SegmentFilter); null: members are only those added by hand. */
  filter: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** A contact added to a segment by hand (API, import, automation step). */
export interface SegmentMemberRow {
  team_id: string;
  segment_id: string;
  contact_id: string;
  created_at: string;
}

export type FilterOperator = 'eq' | 'neq' | 'contains' | 'exists' | 'in' | 'gt' | 'gte' | 'lt' | 'lte';
export type FilterScalar = string | number | boolean;

/**
 * `{ field, op, value }`. `field` is a contact field (email, first_name, last_name, unsubscribed,
 * created_at) or `properties.<key>` with the key as declared; `value` is absent for `exists`
 * (or a boolean: false asks for absence), a list for `in`.
 */
export interface FieldCondition {
  field: string;
  op: FilterOperator;
  value?: FilterScalar | FilterScalar[];
}

/** The contact's effective subscription to a topic (a global unsubscribe is `opt_out`). */
export interface TopicCondition {
  topic: string;
  subscription: TopicSubscription;
}

export type FilterGroup = { all: FilterNode[] } | { any: FilterNode[] } | { not: FilterNode | FilterNode[] };
export type FilterNode = FilterGroup | FieldCondition | TopicCondition;
/** A stored filter's root is always a group. */
export type SegmentFilter = FilterGroup;

/**
 * What a filter is read against when it is compiled: the team's declared properties and its live
 * topics now. A condition naming a property no longer declared with the value's type, or a topic
 * since deleted, matches no contact.
 */
export interface FilterContext {
  /** Declared key (as declared) → its type. */
  properties: ReadonlyMap<string, PropertyType>;
  /** Live topic id → its default subscription (fixed at the topic's creation). */
  topics: ReadonlyMap<string, TopicSubscription>;
}

/** A segment as membership queries need it: its id and its parsed filter (null: explicit only). */
export interface SegmentMembership {
  id: string;
  filter: SegmentFilter | null;
}
