import type { ContactView } from '../contacts/index.js';
import type { ContactAudience } from './audience.js';

// A condition step's rule tree over the contact (and the enrolling event's data): `rule` leaves
// `{ type: 'rule', field, operator, value }`, and `and` / `or` groups of `rules`. Membership is
// two fields: `segments.<segment id>` is true or false (`eq`/`neq`), `topics.<topic id>` the
// effective subscription `opt_in` or `opt_out` (a global unsubscribe is opt_out of every topic).

export const RULES_MAX = 20;
export const RULE_DEPTH_MAX = 3;

const operators = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'starts_with', 'ends_with', 'exists', 'is_empty'] as const;
type Operator = (typeof operators)[number];
const contactFields = new Set(['email', 'first_name', 'last_name', 'unsubscribed', 'created_at']);

export type Rule =
  | { type: 'rule'; field: string; operator: Operator; value?: string | number | boolean | null }
  | { type: 'and' | 'or'; rules: Rule[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a rule tree names, each of which must resolve against the team. */
export interface RuleNames {
  properties: Set<string>;
  segments: Set<string>;
  topics: Set<string>;
}

const membershipField = /^(segments|topics)\.([0-9a-fA-F-]{32,36})$/;

/** Shape problems of a rule tree, and the property keys, segments and topics it names. */
export function checkRule(raw: unknown, problems: string[], names: RuleNames, depth = 1, count = { n: 0 }): void {
  if (!isObject(raw)) return void problems.push('A condition is `{ type: rule, field, operator, value }` or `{ type: and|or, rules }`.');
  if (raw.type === 'and' || raw.type === 'or') {
    if (depth > RULE_DEPTH_MAX) return void problems.push(`Conditions nest at most ${RULE_DEPTH_MAX} levels.`);
    if (!Array.isArray(raw.rules) || raw.rules.length === 0) return void problems.push(`An \`${raw.type}\` condition needs a non-empty \`rules\` array.`);
    for (const rule of raw.rules) checkRule(rule, problems, names, depth + 1, count);
    return;
  }
  if (raw.type !== 'rule') return void problems.push('A condition\'s `type` is `rule`, `and` or `or`.');
  if (++count.n > RULES_MAX) return void problems.push(`A condition has at most ${RULES_MAX} rules.`);
  const { field, operator, value } = raw;
  if (typeof field !== 'string') return void problems.push('A rule names a `field`.');
  if (field.startsWith('segments.') || field.startsWith('topics.')) return checkMembership(field, operator, value, problems, names);
  if (field.startsWith('properties.')) names.properties.add(field.slice('properties.'.length));
  else if (!contactFields.has(field) && !/^event\.[A-Za-z0-9_.-]{1,100}$/.test(field)) {
    problems.push(`\`${field}\` is no field: use email, first_name, last_name, unsubscribed, created_at, properties.<key>, segments.<segment id>, topics.<topic id> or event.<key>.`);
  }
  if (typeof operator !== 'string' || !(operators as readonly string[]).includes(operator)) return void problems.push(`\`operator\` is one of ${operators.join(', ')}.`);
  if (operator === 'exists' || operator === 'is_empty') return;
  if (['gt', 'gte', 'lt', 'lte'].includes(operator) && typeof value !== 'number') problems.push(`\`${operator}\` compares with a number.`);
  if (['contains', 'starts_with', 'ends_with'].includes(operator) && typeof value !== 'string') problems.push(`\`${operator}\` compares with a string.`);
  if ((operator === 'eq' || operator === 'neq') && !(value === null || ['string', 'number', 'boolean'].includes(typeof value))) problems.push(`\`${operator}\` compares with a string, number, boolean or null.`);
}

function checkMembership(field: string, operator: unknown, value: unknown, problems: string[], names: RuleNames): void {
  const match = membershipField.exec(field);
  if (!match) return void problems.push(`\`${field}\` is no field: \`segments.\` and \`topics.\` take a segment or topic id.`);
  const [, kind, id] = match as unknown as [string, 'segments' | 'topics', string];
  names[kind].add(id.toLowerCase());
  if (operator !== 'eq' && operator !== 'neq') return void problems.push(`\`${kind}.<id>\` compares with \`eq\` or \`neq\`.`);
  if (kind === 'segments' && typeof value !== 'boolean') problems.push('`segments.<id>` compares with true (in the segment) or false.');
  if (kind === 'topics' && value !== 'opt_in' && value !== 'opt_out') problems.push('`topics.<id>` compares with `opt_in` or `opt_out`.');
}

/** Whether the rule tree reads topic or segment membership (which costs reads). */
export function readsMembership(rule: Rule): boolean {
  if (rule.type !== 'rule') return rule.rules.some(readsMembership);
  return rule.field.startsWith('segments.') || rule.field.startsWith('topics.');
}

function fieldValue(field: string, contact: ContactView, event: Record<string, unknown>, audience: ContactAudience | undefined): unknown {
  if (field.startsWith('segments.')) return audience?.segments.has(field.slice('segments.'.length).toLowerCase()) ?? false;
  if (field.startsWith('topics.')) return audience?.topics.get(field.slice('topics.'.length).toLowerCase());
  if (field.startsWith('properties.')) return contact.properties[field.slice('properties.'.length)]?.value;
  if (field.startsWith('event.')) return event[field.slice('event.'.length)];
  return (contact as unknown as Record<string, unknown>)[field];
}

const text = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : undefined);

function holds(rule: Extract<Rule, { type: 'rule' }>, actual: unknown): boolean {
  const empty = actual === undefined || actual === null || actual === '';
  switch (rule.operator) {
    case 'exists': return !empty;
    case 'is_empty': return empty;
    case 'eq': return rule.value === null ? empty : actual === rule.value || (text(actual) !== undefined && text(actual) === text(rule.value));
    case 'neq': return !holds({ ...rule, operator: 'eq' }, actual);
    case 'gt': return typeof actual === 'number' && actual > (rule.value as number);
    case 'gte': return typeof actual === 'number' && actual >= (rule.value as number);
    case 'lt': return typeof actual === 'number' && actual < (rule.value as number);
    case 'lte': return typeof actual === 'number' && actual <= (rule.value as number);
    case 'contains': return text(actual)?.includes(text(rule.value)!) ?? false;
    case 'starts_with': return text(actual)?.startsWith(text(rule.value)!) ?? false;
    case 'ends_with': return text(actual)?.endsWith(text(rule.value)!) ?? false;
  }
}

/** Whether a checked rule tree holds for the contact now (`audience`: its membership, when the tree reads it). Text compares ignoring case. */
export function evaluate(rule: Rule, contact: ContactView, event: Record<string, unknown>, audience?: ContactAudience): boolean {
  if (rule.type !== 'rule') {
    return rule.type === 'and' ? rule.rules.every((r) => evaluate(r, contact, event, audience)) : rule.rules.some((r) => evaluate(r, contact, event, audience));
  }
  return holds(rule, fieldValue(rule.field, contact, event, audience));
}
