import { ServiceError } from '../errors.js';

// Show-when rules of a visual template's blocks and sections: a list of conditions, all or any,
// on a contact field or property (`{ field, op, value }` as segment filters write them), a topic
// subscription, segment membership, or a property of the flow's trigger event. Decided per
// contact when a campaign or flow sends; a rule naming a property, topic or segment the team no
// longer has hides the block (the send still goes).

export const RULES_MAX = 20;
type Op = 'eq' | 'neq' | 'contains' | 'exists' | 'in' | 'gt' | 'gte' | 'lt' | 'lte';
const ops = new Set<string>(['eq', 'neq', 'contains', 'exists', 'in', 'gt', 'gte', 'lt', 'lte']);
const contactFields = new Set(['email', 'first_name', 'last_name', 'unsubscribed', 'created_at']);

export type ShowRule =
  | { field: string; op: Op; value?: unknown }
  | { topic: string; subscription: 'opt_in' | 'opt_out' }
  | { segment: string; member: boolean }
  | { event: string; op: Op; value?: unknown };

export interface ShowWhen {
  match: 'all' | 'any';
  rules: ShowRule[];
}

/** What a contact is, as rules read it; campaign and flow senders build one per recipient. */
export interface RenderContact {
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  created_at: string;
  properties: Readonly<Record<string, string | number | boolean>>;
  /** Effective subscription per live topic (a global unsubscribe is opt_out of all). */
  topics: ReadonlyMap<string, 'opt_in' | 'opt_out'>;
  /** Ids of the segments the contact is in. */
  segments: ReadonlySet<string>;
  /** The contact's own unsubscribe link, when the sender has one. */
  unsubscribe_url?: string | null;
}

/** What the team has now: a rule naming something else hides its block. */
export interface AudienceFacts {
  properties: ReadonlySet<string>;
  topics: ReadonlySet<string>;
  segments: ReadonlySet<string>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{ match, rules }` or `{ all: [...] }` / `{ any: [...] }`; 422 validation_error naming the rule otherwise. */
export function parseShowWhen(raw: unknown, path: string): ShowWhen {
  const bad = (at: string, message: string) => new ServiceError(422, 'validation_error', message, { errors: [{ path: at, message }] });
  if (!isObject(raw)) throw bad(path, 'show_when is `{ match: "all" | "any", rules: [...] }`.');
  const match = 'all' in raw ? 'all' : 'any' in raw ? 'any' : raw.match;
  const rules = 'all' in raw ? raw.all : 'any' in raw ? raw.any : raw.rules;
  if (match !== 'all' && match !== 'any') throw bad(`${path}.match`, '`match` is `all` or `any`.');
  if (!Array.isArray(rules) || rules.length === 0 || rules.length > RULES_MAX) throw bad(`${path}.rules`, `\`rules\` holds 1-${RULES_MAX} conditions.`);
  return { match, rules: rules.map((r, i) => parseRule(r, `${path}.rules[${i}]`, bad)) };
}

function parseRule(raw: unknown, path: string, bad: (at: string, message: string) => ServiceError): ShowRule {
  if (!isObject(raw)) throw bad(path, 'A rule is a field, topic, segment or event condition.');
  if (typeof raw.topic === 'string') {
    if (raw.subscription !== 'opt_in' && raw.subscription !== 'opt_out') throw bad(`${path}.subscription`, '`subscription` is `opt_in` or `opt_out`.');
    return { topic: raw.topic.toLowerCase(), subscription: raw.subscription };
  }
  if (typeof raw.segment === 'string') {
    if (raw.member !== undefined && typeof raw.member !== 'boolean') throw bad(`${path}.member`, '`member` is true or false.');
    return { segment: raw.segment.toLowerCase(), member: raw.member !== false };
  }
  const name = typeof raw.field === 'string' ? raw.field : typeof raw.event === 'string' ? raw.event : undefined;
  if (name === undefined) throw bad(path, 'A rule has `field`, `topic`, `segment` or `event`.');
  if (typeof raw.op !== 'string' || !ops.has(raw.op)) throw bad(`${path}.op`, `\`op\` is one of ${[...ops].join(', ')}.`);
  if (raw.op === 'in' && !Array.isArray(raw.value)) throw bad(`${path}.value`, '`in` takes a list of values.');
  if (raw.op !== 'exists' && raw.op !== 'in' && !['string', 'number', 'boolean'].includes(typeof raw.value)) throw bad(`${path}.value`, '`value` is a string, number or boolean.');
  if (typeof raw.field === 'string') {
    if (!contactFields.has(name) && !/^properties\.[A-Za-z0-9_]+$/.test(name)) throw bad(`${path}.field`, `\`field\` is a contact field (${[...contactFields].join(', ')}) or \`properties.<key>\`.`);
    return { field: name, op: raw.op as Op, value: raw.value };
  }
  return { event: name, op: raw.op as Op, value: raw.value };
}

/** Whether a block with these rules shows for this contact (and trigger event). */
export function shows(rule: ShowWhen, contact: RenderContact | null, audience: AudienceFacts | null, event: unknown): boolean {
  const results = rule.rules.map((r) => decide(r, contact, audience, event));
  if (results.includes('gone')) return false;
  return rule.match === 'all' ? results.every((r) => r === true) : results.some((r) => r === true);
}

function decide(rule: ShowRule, contact: RenderContact | null, audience: AudienceFacts | null, event: unknown): boolean | 'gone' {
  if ('topic' in rule) {
    if (audience && !audience.topics.has(rule.topic)) return 'gone';
    return (contact?.topics.get(rule.topic) ?? null) === rule.subscription;
  }
  if ('segment' in rule) {
    if (audience && !audience.segments.has(rule.segment)) return 'gone';
    return (contact?.segments.has(rule.segment) ?? false) === rule.member;
  }
  if ('event' in rule) return compare(rule.op, lookup(event, rule.event.split('.')), rule.value);
  if (rule.field.startsWith('properties.')) {
    const key = rule.field.slice('properties.'.length);
    if (audience && !audience.properties.has(key)) return 'gone';
    return compare(rule.op, contact?.properties[key], rule.value);
  }
  return compare(rule.op, contact ? (contact as unknown as Record<string, unknown>)[rule.field] : undefined, rule.value, rule.field === 'created_at');
}

export function lookup(from: unknown, path: readonly string[]): unknown {
  let at = from;
  for (const key of path) {
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return at;
}

/** Absent counts as not equal (as segment filters read it); text compares ignoring case. */
function compare(op: Op, actual: unknown, expected: unknown, dates = false): boolean {
  const present = actual !== undefined && actual !== null && actual !== '';
  if (op === 'exists') return expected === false ? !present : present;
  if (op === 'neq') return !present || !same(actual, expected);
  if (!present) return false;
  switch (op) {
    case 'eq': return same(actual, expected);
    case 'in': return (expected as unknown[]).some((e) => same(actual, e));
    case 'contains': return String(actual).toLowerCase().includes(String(expected).toLowerCase());
    default: {
      const [a, b] = dates ? [Date.parse(String(actual)), Date.parse(String(expected))] : [Number(actual), Number(expected)];
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return op === 'gt' ? a > b : op === 'gte' ? a >= b : op === 'lt' ? a < b : a <= b;
    }
  }
}

const same = (a: unknown, b: unknown) => typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : a === b;
