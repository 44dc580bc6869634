import type { FieldError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { platformEmailEventTypes, platformEventTypes } from '../outbox/index.js';
import { isIsoDateOrInstant } from '../time.js';

// The names and payload rules of custom events (spec Custom event definition, Custom events).

export const EVENT_NAME_MAX = 100;
export const SCHEMA_KEYS_MAX = 50;
export const PAYLOAD_BYTES_MAX = 16 * 1024;

export type SchemaType = 'string' | 'number' | 'boolean' | 'date';
export type EventSchema = Record<string, SchemaType>;

const schemaTypes = new Set<string>(['string', 'number', 'boolean', 'date']);
const nameShape = /^[a-z][a-z0-9._-]*$/;
const uuidShape = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** Store events need no definition; their payload keys are fixed. */
export const storeEvents = [
  'store:product.viewed', 'store:cart.updated', 'store:checkout.started', 'store:order.placed', 'store:order.paid',
  'store:order.fulfilled', 'store:order.cancelled', 'store:order.refunded',
] as const;

export const isStoreEvent = (name: string) => (storeEvents as readonly string[]).includes(name);

/** The `svc:email.*` family automations may start on: the lifecycle of mail sent to a contact (written by core/outbox). */
export const platformEmailEvents = platformEmailEventTypes;

export const isPlatformEvent = (name: string) => (platformEventTypes as readonly string[]).includes(name);

/** Why a definition name is refused, or undefined when it is a good one. */
export function nameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'The `name` field is required.';
  if (name.startsWith('svc:')) return 'The `svc:` prefix is reserved for platform events.';
  if (name.startsWith('store:')) return 'The `store:` prefix is reserved for store events.';
  if (name.length > EVENT_NAME_MAX) return `An event name is at most ${EVENT_NAME_MAX} characters.`;
  if (uuidShape.test(name) || looksLikeId(name)) return 'An event name must not look like an ID.';
  if (!nameShape.test(name)) return 'An event name is lower-case letters, digits, `.`, `_` and `-`, starting with a letter.';
  return undefined;
}

/** A schema's problems, one per key (plus one for the whole when it is not a flat map). */
export function schemaProblems(schema: unknown): FieldError[] {
  if (schema === null || schema === undefined) return [];
  if (typeof schema !== 'object' || Array.isArray(schema)) return [{ path: 'schema', message: 'The `schema` is an object of payload key to type, or null.' }];
  const entries = Object.entries(schema);
  const errors: FieldError[] = [];
  if (entries.length > SCHEMA_KEYS_MAX) errors.push({ path: 'schema', message: `A schema has at most ${SCHEMA_KEYS_MAX} keys.` });
  for (const [key, type] of entries) {
    if (key.length === 0 || key.length > 100) errors.push({ path: `schema.${key}`, message: 'A schema key is 1-100 characters.' });
    else if (typeof type !== 'string' || !schemaTypes.has(type)) errors.push({ path: `schema.${key}`, message: `\`${key}\` must be one of string, number, boolean, date.` });
  }
  return errors;
}

function typeProblem(key: string, value: unknown, type: SchemaType): string | undefined {
  switch (type) {
    case 'string': return typeof value === 'string' ? undefined : `\`${key}\` must be a string.`;
    case 'number': return typeof value === 'number' && Number.isFinite(value) ? undefined : `\`${key}\` must be a number.`;
    case 'boolean': return typeof value === 'boolean' ? undefined : `\`${key}\` must be a boolean.`;
    case 'date': return typeof value === 'string' && isIsoDateOrInstant(value) ? undefined : `\`${key}\` must be an ISO 8601 date or instant naming a real day.`;
  }
}

/** A payload against a definition's schema: one entry per mismatching or undeclared key. */
export function payloadProblems(payload: Record<string, unknown>, schema: EventSchema | null): FieldError[] {
  if (schema === null) return [];
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(payload)) {
    const type = schema[key];
    const problem = type === undefined ? `\`${key}\` is not in the event's schema.` : value === null ? undefined : typeProblem(key, value, type);
    if (problem) errors.push({ path: `payload.${key}`, message: problem });
  }
  return errors;
}

const storeKeys: Record<string, SchemaType | 'items'> = {
  value: 'number', currency: 'string', checkout_url: 'string', order_id: 'string', product_id: 'string', items: 'items',
};

function itemsProblems(items: unknown): FieldError[] {
  if (!Array.isArray(items)) return [{ path: 'payload.items', message: '`items` must be an array.' }];
  const itemKeys: Record<string, SchemaType> = { title: 'string', quantity: 'number', price: 'number' };
  return items.flatMap((item, i): FieldError[] => {
    const path = `payload.items[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return [{ path, message: 'An item is an object with `title`, `quantity` and `price`.' }];
    return Object.entries(item as Record<string, unknown>).flatMap(([key, value]) => {
      const type = itemKeys[key];
      const problem = type === undefined ? `\`${key}\` is not an item key (title, quantity, price).` : typeProblem(key, value, type);
      return problem ? [{ path: `${path}.${key}`, message: problem }] : [];
    });
  });
}

/** A store event's payload: the fixed keys only, each of its type. */
export function storePayloadProblems(payload: Record<string, unknown>): FieldError[] {
  return Object.entries(payload).flatMap(([key, value]): FieldError[] => {
    const type = storeKeys[key];
    if (type === undefined) return [{ path: `payload.${key}`, message: `\`${key}\` is not a store event key (${Object.keys(storeKeys).join(', ')}).` }];
    if (type === 'items') return itemsProblems(value);
    const problem = value === null ? undefined : typeProblem(key, value, type);
    return problem ? [{ path: `payload.${key}`, message: problem }] : [];
  });
}
