import { DateTime } from 'luxon';
import type {
  FieldCondition, FilterNode, FilterOperator, FilterScalar, PropertyType, SegmentFilter, TopicCondition,
} from '../../storage/repos/index.js';
import type { FieldError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { readIsoInstant } from '../time.js';

// A segment filter's checks (spec Segment and filter): the shape and the limits first, without
// state; then each condition against the team: its field and operator by the field's type, its
// value, declared properties, live topics. Every bad condition is one `errors[]` entry with the
// path to it (`filter.all[1].any[0]`), so a caller sees all of them at once.

export const FILTER_DEPTH_MAX = 3;
export const FILTER_CONDITIONS_MAX = 20;
/** The most values an `in` list may give: enough for any hand-made list, bounded for the query. */
export const FILTER_IN_MAX = 100;
/** The longest text value (property values are at most 500 characters). */
export const FILTER_TEXT_MAX = 500;

type ValueKind = 'string' | 'number' | 'boolean' | 'date';

const textOps: readonly FilterOperator[] = ['eq', 'neq', 'contains', 'exists', 'in'];

/** The spec's field and operator table. */
const contactFields: Record<string, { kind: ValueKind; ops: readonly FilterOperator[] }> = {
  email: { kind: 'string', ops: ['eq', 'neq', 'contains', 'in'] },
  first_name: { kind: 'string', ops: textOps },
  last_name: { kind: 'string', ops: textOps },
  unsubscribed: { kind: 'boolean', ops: ['eq'] },
  created_at: { kind: 'date', ops: ['gt', 'gte', 'lt', 'lte'] },
};

/** Properties by type: strings as first_name, numbers as the table says, booleans as `unsubscribed`. */
const propertyOps: Record<PropertyType, readonly FilterOperator[]> = {
  string: textOps,
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'exists'],
  boolean: ['eq'],
};

const operators = new Set<string>(['eq', 'neq', 'contains', 'exists', 'in', 'gt', 'gte', 'lt', 'lte']);

/** A condition found by the shape check, with where it is. */
export interface Located<T> {
  path: string;
  condition: T;
}

export interface FilterShape {
  filter: SegmentFilter;
  fields: Located<FieldCondition>[];
  topics: Located<TopicCondition>[];
  errors: FieldError[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The shape, nesting and count checks. `errors` lists what is wrong; conditions are not yet judged. */
export function readFilterShape(raw: unknown): FilterShape {
  const shape: FilterShape = { filter: raw as SegmentFilter, fields: [], topics: [], errors: [] };
  if (!isObject(raw) || !isGroup(raw)) {
    shape.errors.push({ path: 'filter', message: 'A filter is an object with one group: `all`, `any` or `not`.' });
    return shape;
  }
  walk(raw, 'filter', 1, shape);
  const count = shape.fields.length + shape.topics.length;
  if (count > FILTER_CONDITIONS_MAX) shape.errors.push({ path: 'filter', message: `A filter has at most ${FILTER_CONDITIONS_MAX} conditions; this one has ${count}.` });
  return shape;
}

const isGroup = (node: Record<string, unknown>) => 'all' in node || 'any' in node || 'not' in node;

function walk(node: unknown, path: string, depth: number, shape: FilterShape): void {
  if (!isObject(node)) {
    shape.errors.push({ path, message: 'Each item is a group (`all`, `any`, `not`) or a condition (`{field, op, value}` or `{topic, subscription}`).' });
    return;
  }
  if (isGroup(node)) return walkGroup(node, path, depth, shape);
  if ('topic' in node || 'subscription' in node) {
    const extra = Object.keys(node).filter((k) => k !== 'topic' && k !== 'subscription');
    if (extra.length) shape.errors.push({ path, message: `A topic condition has only \`topic\` and \`subscription\` (not \`${extra[0]}\`).` });
    else shape.topics.push({ path, condition: node as unknown as TopicCondition });
    return;
  }
  const extra = Object.keys(node).filter((k) => k !== 'field' && k !== 'op' && k !== 'value');
  if (extra.length) shape.errors.push({ path, message: `A condition has only \`field\`, \`op\` and \`value\` (not \`${extra[0]}\`).` });
  else shape.fields.push({ path, condition: node as unknown as FieldCondition });
}

function walkGroup(node: Record<string, unknown>, path: string, depth: number, shape: FilterShape): void {
  const keys = Object.keys(node);
  const kind = keys[0]!;
  if (keys.length !== 1 || !['all', 'any', 'not'].includes(kind)) {
    shape.errors.push({ path, message: 'A group has exactly one of `all`, `any` or `not`.' });
    return;
  }
  if (depth > FILTER_DEPTH_MAX) {
    shape.errors.push({ path, message: `Groups nest at most ${FILTER_DEPTH_MAX} deep.` });
    return;
  }
  const members = node[kind];
  if (kind === 'not' && isObject(members)) return walk(members, `${path}.not`, depth + 1, shape);
  if (!Array.isArray(members) || members.length === 0) {
    shape.errors.push({ path: `${path}.${kind}`, message: `\`${kind}\` is a non-empty list${kind === 'not' ? ' or one item' : ''}.` });
    return;
  }
  members.forEach((member, i) => walk(member, `${path}.${kind}[${i}]`, depth + 1, shape));
}

/** What a filter is checked against: the team's declared properties (by key lower-cased) and live topics. */
export interface TeamFilterState {
  properties: ReadonlyMap<string, { key: string; type: PropertyType }>;
  liveTopics: ReadonlySet<string>;
}

/**
 * Judges each condition against the team and normalises it in place: a property's key as
 * declared, a topic id lower-cased, a date as canonical UTC text. Adds one error per bad condition.
 */
export function judgeConditions(shape: FilterShape, state: TeamFilterState): void {
  for (const { path, condition } of shape.topics) {
    const message = judgeTopic(condition, state);
    if (message) shape.errors.push({ path, message });
  }
  for (const { path, condition } of shape.fields) {
    const message = judgeField(condition, state);
    if (message) shape.errors.push({ path, message });
  }
}

function judgeTopic(condition: TopicCondition, state: TeamFilterState): string | undefined {
  if (condition.subscription !== 'opt_in' && condition.subscription !== 'opt_out') return '`subscription` is `opt_in` or `opt_out`.';
  if (typeof condition.topic !== 'string' || !looksLikeId(condition.topic)) return '`topic` is a topic id.';
  condition.topic = condition.topic.toLowerCase();
  if (!state.liveTopics.has(condition.topic)) return `Topic \`${condition.topic}\` not found.`;
  return undefined;
}

function judgeField(condition: FieldCondition, state: TeamFilterState): string | undefined {
  const { field, op } = condition;
  if (typeof field !== 'string') return '`field` is required: a contact field or `properties.<key>`.';
  if (typeof op !== 'string' || !operators.has(op)) return `\`op\` is one of ${[...operators].join(', ')}.`;
  let kind: ValueKind;
  let ops: readonly FilterOperator[];
  if (field.startsWith('properties.')) {
    const declared = state.properties.get(field.slice('properties.'.length).toLowerCase());
    if (!declared) return `Property \`${field.slice('properties.'.length)}\` is not declared.`;
    condition.field = `properties.${declared.key}`;
    kind = declared.type;
    ops = propertyOps[declared.type];
  } else {
    const known = contactFields[field];
    if (!known) return `Unknown field \`${field}\`: use ${Object.keys(contactFields).join(', ')} or \`properties.<key>\`.`;
    ({ kind, ops } = known);
  }
  if (!ops.includes(op)) return `Operator \`${op}\` does not suit \`${field}\` (${kind}): use ${ops.join(', ')}.`;
  return judgeValue(condition, kind);
}

function judgeValue(condition: FieldCondition, kind: ValueKind): string | undefined {
  const { op, value } = condition;
  if (op === 'exists') return value === undefined || typeof value === 'boolean' ? undefined : '`exists` takes no value, or `true` / `false`.';
  if (op === 'in') {
    if (!Array.isArray(value) || value.length === 0 || value.length > FILTER_IN_MAX) return `\`in\` takes a list of 1-${FILTER_IN_MAX} values.`;
    const bad = value.findIndex((v) => scalarProblem(v, kind) !== undefined);
    return bad < 0 ? undefined : `value[${bad}]: ${scalarProblem(value[bad]!, kind)}`;
  }
  if (value === undefined || Array.isArray(value)) return `\`${op}\` takes one value.`;
  if (op === 'contains' && value === '') return '`contains` takes a non-empty text.';
  const problem = scalarProblem(value, kind);
  if (problem) return problem;
  if (kind === 'date') condition.value = readDate(value as string)!.toISOString();
  return undefined;
}

function scalarProblem(value: FilterScalar, kind: ValueKind): string | undefined {
  if (kind === 'date') return typeof value === 'string' && readDate(value) ? undefined : 'The value is an ISO 8601 date (2026-01-31) or date and time with a zone.';
  if (typeof value !== kind) return `The value is a ${kind}.`;
  if (typeof value === 'string' && value.length > FILTER_TEXT_MAX) return `A text value is at most ${FILTER_TEXT_MAX} characters.`;
  if (typeof value === 'number' && !Number.isFinite(value)) return 'The value is a finite number.';
  return undefined;
}

/** A full instant, or a bare date read as its start in UTC. */
function readDate(text: string): Date | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const day = DateTime.fromISO(text, { zone: 'utc' });
    return day.isValid ? day.toJSDate() : undefined;
  }
  return readIsoInstant(text);
}

/** The property keys (as given) and topic ids a filter names, to load the team's state once. */
export function namedInFilter(shape: FilterShape): { propertyKeys: string[]; topicIds: string[] } {
  const propertyKeys = shape.fields.map((f) => f.condition.field).filter((f) => typeof f === 'string' && f.startsWith('properties.'))
    .map((f) => f.slice('properties.'.length));
  const topicIds = shape.topics.map((t) => t.condition.topic).filter((id) => typeof id === 'string' && looksLikeId(id)).map((id) => id.toLowerCase());
  return { propertyKeys, topicIds };
}

export type { FilterNode };
