import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { containsPattern } from '../sql/paginate.js';
import type { FieldCondition, FilterContext, FilterNode, FilterScalar, TopicCondition } from './segments-tables.js';

// A segment filter as one SQL condition over the contact row aliased `c` (or, for a count that
// reads no contact row, over a contact id alone: see `Subject`): groups become
// AND / OR / NOT, a contact field a comparison on `c`, a property condition an EXISTS over
// contact_property_values (primary key (contact_id, key): one index probe per contact), a topic
// condition an EXISTS over contact_topics with the topic's default decided here, when the
// filter is compiled (a default is fixed at the topic's creation). The same text runs on SQLite
// and PostgreSQL: LIKE on both sides folded with svc_casefold, booleans as comparisons, numbers
// and 0/1 in num_value. Every piece is true or false, never NULL, so NOT means "does not match".

type Condition = RawBuilder<SqlBool>;

const never: Condition = sql<SqlBool>`1 = 0`;

/**
 * The contact a compiled filter tests: its id, and whether it is unsubscribed (globally). The row
 * subject is `contacts as c`; an id subject names only a contact id (e.g. a value row's
 * `d.contact_id`) and answers the subscription from the team's unsubscribed contacts, a small
 * range of contacts_team_subscription read once per query, so a count need not read the row of
 * every contact it finds. An id subject cannot test the row's own fields (`needsContactRow`).
 */
export interface Subject {
  id: RawBuilder<unknown>;
  unsubscribed: Condition;
  subscribed: Condition;
}

const rowSubject: Subject = {
  id: sql.ref('c.id'),
  unsubscribed: sql<SqlBool>`c.subscription_status = 'unsubscribed'`,
  subscribed: sql<SqlBool>`c.subscription_status <> 'unsubscribed'`,
};

/** A subject that is only a contact id of the team (a column that is never NULL). */
export function idSubject(teamId: string, id: RawBuilder<unknown>): Subject {
  const unsubscribed = sql<SqlBool>`${id} in (select u.id from contacts u where u.team_id = ${teamId} and u.subscription_status = 'unsubscribed')`;
  return { id, unsubscribed, subscribed: sql<SqlBool>`not ${unsubscribed}` };
}

/** Whether the filter tests a field of the contact row itself (an id subject cannot). */
export function needsContactRow(node: FilterNode): boolean {
  if ('all' in node) return node.all.some(needsContactRow);
  if ('any' in node) return node.any.some(needsContactRow);
  if ('not' in node) return (Array.isArray(node.not) ? node.not : [node.not]).some(needsContactRow);
  if ('topic' in node) return false;
  return !(node.field.startsWith('properties.') || node.field === 'unsubscribed');
}

/** The filter as a condition on the contact row `c` (callers select from `contacts as c`), or on `subject`. */
export function filterCondition(node: FilterNode, context: FilterContext, subject: Subject = rowSubject): Condition {
  if ('all' in node) return group(node.all.map((n) => filterCondition(n, context, subject)), 'and');
  if ('any' in node) return group(node.any.map((n) => filterCondition(n, context, subject)), 'or');
  if ('not' in node) {
    const inner = Array.isArray(node.not) ? group(node.not.map((n) => filterCondition(n, context, subject)), 'and') : filterCondition(node.not, context, subject);
    return sql<SqlBool>`not ${inner}`;
  }
  if ('topic' in node) return topicCondition(node, context, subject);
  return fieldCondition(node, context, subject);
}

function group(parts: Condition[], operator: 'and' | 'or'): Condition {
  if (parts.length === 0) return operator === 'and' ? sql<SqlBool>`1 = 1` : never;
  return sql<SqlBool>`(${sql.join(parts, sql.raw(` ${operator} `))})`;
}

/**
 * Effective subscription: a global unsubscribe is opt_out for every topic; else the contact's own
 * choice; else the default. Only a choice differing from the default needs a row to be read.
 */
function topicCondition(node: TopicCondition, context: FilterContext, subject: Subject): Condition {
  const fallback = context.topics.get(node.topic);
  if (fallback === undefined) return never;
  const away = fallback === 'opt_in' ? 'opt_out' : 'opt_in';
  const chose = sql<SqlBool>`exists (select 1 from contact_topics ct where ct.contact_id = ${subject.id} and ct.topic_id = ${node.topic} and ct.subscription = ${away})`;
  const optIn = fallback === 'opt_in' ? sql<SqlBool>`not ${chose}` : chose;
  if (node.subscription === 'opt_in') return sql<SqlBool>`(${subject.subscribed} and ${optIn})`;
  return sql<SqlBool>`(${subject.unsubscribed} or not ${optIn})`;
}

function fieldCondition(node: FieldCondition, context: FilterContext, subject: Subject): Condition {
  switch (node.field) {
    case 'email': return textCondition(sql.ref('c.email_key'), node.op, lowered(node.value));
    case 'first_name': return textCondition(sql.ref('c.first_name'), node.op, node.value);
    case 'last_name': return textCondition(sql.ref('c.last_name'), node.op, node.value);
    case 'unsubscribed': return node.value === true ? subject.unsubscribed : subject.subscribed;
    case 'created_at': return compare(sql.ref('c.created_at'), node.op, node.value);
    default: return propertyCondition(node, context, subject);
  }
}

const lowered = (value: FieldCondition['value']) =>
  Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v.toLowerCase() : v)) : typeof value === 'string' ? value.toLowerCase() : value;

/** A nullable text column: absent is never equal, never contains, is `neq` anything. */
function textCondition(column: RawBuilder<unknown>, op: FieldCondition['op'], value: FieldCondition['value']): Condition {
  const present = sql<SqlBool>`(${column} is not null and ${column} <> '')`;
  switch (op) {
    case 'exists': return value === false ? sql<SqlBool>`not ${present}` : present;
    case 'neq': return sql<SqlBool>`not ${textCondition(column, 'eq', value)}`;
    case 'contains': return sql<SqlBool>`(${column} is not null and svc_casefold(${column}) like ${containsPattern(String(value).toLowerCase())} escape '\\')`;
    default: return sql<SqlBool>`(${column} is not null and ${compare(column, op, value)})`;
  }
}

function compare(column: RawBuilder<unknown>, op: FieldCondition['op'], value: FieldCondition['value']): Condition {
  const v = (x: FilterScalar) => (typeof x === 'boolean' ? (x ? 1 : 0) : x);
  if (op === 'in') {
    const list = Array.isArray(value) ? value : [];
    return list.length === 0 ? never : sql<SqlBool>`${column} in (${sql.join(list.map(v))})`;
  }
  if (Array.isArray(value) || value === undefined) return never;
  const operator = ({ eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as Record<string, string>)[op];
  return operator ? sql<SqlBool>`${column} ${sql.raw(operator)} ${v(value)}` : never;
}

/**
 * `properties.<key>`: a value row of the key, tested on text_value (strings) or num_value (numbers,
 * booleans as 0/1). The key must still be declared with the type the filter was checked against.
 */
function propertyCondition(node: FieldCondition, context: FilterContext, subject: Subject): Condition {
  const key = node.field.startsWith('properties.') ? node.field.slice('properties.'.length) : undefined;
  const type = key === undefined ? undefined : context.properties.get(key);
  if (key === undefined || type === undefined) return never;
  const row = (test: Condition) => sql<SqlBool>`exists (select 1 from contact_property_values v where v.contact_id = ${subject.id} and v.key = ${key} and ${test})`;
  if (node.op === 'exists') return node.value === false ? sql<SqlBool>`not ${row(sql<SqlBool>`1 = 1`)}` : row(sql<SqlBool>`1 = 1`);
  if (node.op === 'neq') return sql<SqlBool>`not ${propertyCondition({ ...node, op: 'eq' }, context, subject)}`;
  const values = Array.isArray(node.value) ? node.value : [node.value];
  if (!values.every((x) => typeof x === type)) return never;
  if (type === 'string') {
    if (node.op === 'contains') return row(sql<SqlBool>`svc_casefold(v.text_value) like ${containsPattern(String(node.value).toLowerCase())} escape '\\'`);
    return row(compare(sql.ref('v.text_value'), node.op, node.value));
  }
  return row(compare(sql.ref('v.num_value'), node.op, node.value));
}

/**
 * A property condition every member must meet, read as an index range over the team's values of
 * the key (contact_property_values_text / _num): a count can start from the few contacts in that
 * range instead of visiting every contact of the team. Answers the range as a condition on the
 * value row `d`, and the filter left to test on each contact it finds (without that condition).
 */
export interface DrivingRange {
  key: string;
  test: Condition;
  rest: FilterNode;
}

export function drivingRange(node: FilterNode, context: FilterContext): DrivingRange | undefined {
  const conjuncts = 'all' in node ? node.all : 'any' in node || 'not' in node || 'topic' in node ? [] : [node];
  for (const [i, c] of conjuncts.entries()) {
    if ('all' in c || 'any' in c || 'not' in c || 'topic' in c) continue;
    const test = rangeOf(c, context);
    if (!test) continue;
    return { key: c.field.slice('properties.'.length), test, rest: { all: conjuncts.filter((_, j) => j !== i) } };
  }
  return undefined;
}

/** The condition on `d` for a property comparison an index range can answer (not contains, neq, exists). */
function rangeOf(node: FieldCondition, context: FilterContext): Condition | undefined {
  if (!node.field.startsWith('properties.') || !['eq', 'in', 'gt', 'gte', 'lt', 'lte'].includes(node.op)) return undefined;
  const type = context.properties.get(node.field.slice('properties.'.length));
  const values = Array.isArray(node.value) ? node.value : [node.value];
  if (type === undefined || values.length === 0 || !values.every((x) => typeof x === type)) return undefined;
  return compare(sql.ref(type === 'string' ? 'd.text_value' : 'd.num_value'), node.op, node.value);
}
