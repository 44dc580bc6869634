import type { ContactView } from '../contacts/index.js';

// A condition step's rule tree over the contact (and the enrolling event's data): `rule` leaves
// `{ type: 'rule', field, operator, value }`, and `and` / `or` groups of `rules`.

export const RULES_MAX = 20;
export const RULE_DEPTH_MAX = 3;

const operators = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'starts_with', 'ends_with', 'exists', 'is_empty'] as const;
type Operator = (typeof operators)[number];
const contactFields = new Set(['email', 'first_name', 'last_name', 'unsubscribed', 'created_at']);

export type Rule =
  | { type: 'rule'; field: string; operator: Operator; value?: string | number | boolean | null }
  | { type: 'and' | 'or'; rules: Rule[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Shape problems of a rule tree, and the property keys it names (which must be declared). */
export function checkRule(raw: unknown, problems: string[], properties: Set<string>, depth = 1, count = { n: 0 }): void {
  if (!isObject(raw)) return void problems.push('A condition is `{ type: rule, field, operator, value }` or `{ type: and|or, rules }`.');
  if (raw.type === 'and' || raw.type === 'or') {
    if (depth > RULE_DEPTH_MAX) return void problems.push(`Conditions nest at most ${RULE_DEPTH_MAX} levels.`);
    if (!Array.isArray(raw.rules) || raw.rules.length === 0) return void problems.push(`An \`${raw.type}\` condition needs a non-empty \`rules\` array.`);
    for (const rule of raw.rules) checkRule(rule, problems, properties, depth + 1, count);
    return;
  }
  if (raw.type !== 'rule') return void problems.push('A condition\'s `type` is `rule`, `and` or `or`.');
  if (++count.n > RULES_MAX) return void problems.push(`A condition has at most ${RULES_MAX} rules.`);
  const { field, operator, value } = raw;
  if (typeof field !== 'string') return void problems.push('A rule names a `field`.');
  if (field.startsWith('properties.')) properties.add(field.slice('properties.'.length));
  else if (!contactFields.has(field) && !/^event\.[A-Za-z0-9_.-]{1,100}$/.test(field)) {
    problems.push(`\`${field}\` is no field: use email, first_name, last_name, unsubscribed, created_at, properties.<key> or event.<key>.`);
  }
  if (typeof operator !== 'string' || !(operators as readonly string[]).includes(operator)) return void problems.push(`\`operator\` is one of ${operators.join(', ')}.`);
  if (operator === 'exists' || operator === 'is_empty') return;
  if (['gt', 'gte', 'lt', 'lte'].includes(operator) && typeof value !== 'number') problems.push(`\`${operator}\` compares with a number.`);
  if (['contains', 'starts_with', 'ends_with'].includes(operator) && typeof value !== 'string') problems.push(`\`${operator}\` compares with a string.`);
  if ((operator === 'eq' || operator === 'neq') && !(value === null || ['string', 'number', 'boolean'].includes(typeof value))) problems.push(`\`${operator}\` compares with a string, number, boolean or null.`);
}

function fieldValue(field: string, contact: ContactView, event: Record<string, unknown>): unknown {
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

/** Whether a checked rule tree holds for the contact now. Text compares ignoring case. */
export function evaluate(rule: Rule, contact: ContactView, event: Record<string, unknown>): boolean {
  if (rule.type !== 'rule') return rule.type === 'and' ? rule.rules.every((r) => evaluate(r, contact, event)) : rule.rules.some((r) => evaluate(r, contact, event));
  return holds(rule, fieldValue(rule.field, contact, event));
}
