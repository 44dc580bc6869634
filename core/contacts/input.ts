import type { SubscriptionStatus, TopicSubscription } from '../../storage/repos/index.js';
import { invalidParameter, missingField, validationError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { isBareAddress, suppressionKey } from '../suppressions/index.js';

// The checks of contact input that need no state. Field content that is wrong is 422
// validation_error naming the field; a property value is 422 invalid_parameter naming its key.

export const NAME_MAX = 200;
export const PROPERTY_KEY_MAX = 50;
/**
 * A string property value's longest length. Values are indexed for segment filters, and a
 * PostgreSQL btree entry must stay under about 2,700 bytes: 500 characters of up to 4 bytes each,
 * with the team id and key, stay under it.
 */
export const PROPERTY_STRING_MAX = 500;

export type PropertyValue = string | number | boolean;
export type PropertyInput = Record<string, PropertyValue | null>;

export interface TopicChoiceInput {
  id: string;
  subscription: TopicSubscription;
}

/** A contact's fields as a create or update sends them (undefined: not sent). */
export interface ContactInput {
  email?: string;
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean;
  subscription_status?: SubscriptionStatus;
  properties?: PropertyInput;
}

export interface CreateContactInput extends ContactInput {
  segments?: { id: string }[];
  topics?: TopicChoiceInput[];
}

/** Matching on address is case-insensitive: the whole address trimmed and lower-cased. */
export const emailKeyOf = suppressionKey;

export function checkEmail(value: unknown, path = 'email'): string {
  if (value === undefined || value === null) throw missingField(path);
  if (typeof value !== 'string' || !isBareAddress(value.trim())) throw validationError(422, path, `The \`${path}\` field must be one email address.`);
  return value.trim();
}

export function checkName(value: string | null | undefined, path: 'first_name' | 'last_name'): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (value.length > NAME_MAX) throw validationError(422, path, `The \`${path}\` field is at most ${NAME_MAX} characters.`);
  return value;
}

/**
 * The status the input asks for, or undefined when it asks nothing. `unsubscribed` and
 * `subscription_status` must agree when both are sent. `unsubscribed: false` alone lifts an
 * opt-out (to `subscribed`) and otherwise changes nothing.
 */
export function requestedStatus(input: ContactInput, current: SubscriptionStatus | undefined): SubscriptionStatus | undefined {
  const { unsubscribed, subscription_status: status } = input;
  if (unsubscribed !== undefined && status !== undefined && unsubscribed !== (status === 'unsubscribed')) {
    throw validationError(422, 'subscription_status', `\`subscription_status: ${status}\` does not agree with \`unsubscribed: ${unsubscribed}\`.`);
  }
  if (status !== undefined) return status;
  if (unsubscribed === true) return 'unsubscribed';
  if (unsubscribed === false) return current === 'unsubscribed' ? 'subscribed' : current;
  return undefined;
}

const keyShape = new RegExp(`^[A-Za-z_][A-Za-z0-9_]{0,${PROPERTY_KEY_MAX - 1}}$`);

export function checkPropertyKey(key: string, path = `properties.${key}`): string {
  if (!keyShape.test(key)) {
    throw invalidParameter(path, `A property key is 1-${PROPERTY_KEY_MAX} letters, digits or underscores, not starting with a digit (got \`${key.slice(0, 60)}\`).`);
  }
  return key;
}

/** Shape only: keys well formed, strings within bounds, numbers finite. Types are checked with the definitions. */
export function checkProperties(properties: PropertyInput | undefined): PropertyInput | undefined {
  if (properties === undefined) return undefined;
  for (const [key, value] of Object.entries(properties)) {
    checkPropertyKey(key);
    if (typeof value === 'string' && value.length > PROPERTY_STRING_MAX) {
      throw invalidParameter(`properties.${key}`, `The value of property \`${key}\` is longer than ${PROPERTY_STRING_MAX} characters.`);
    }
    if (typeof value === 'number' && !Number.isFinite(value)) throw invalidParameter(`properties.${key}`, `The value of property \`${key}\` must be a finite number.`);
  }
  return properties;
}

/** Topic ids well formed and each named once. */
export function checkTopicChoices(choices: TopicChoiceInput[] | undefined, path = 'topics'): TopicChoiceInput[] {
  if (choices === undefined) return [];
  const seen = new Set<string>();
  return choices.map((choice, i) => {
    const id = choice.id.toLowerCase();
    if (!looksLikeId(id)) throw validationError(422, `${path}[${i}].id`, `\`${path}[${i}].id\` must be a topic id.`);
    if (seen.has(id)) throw validationError(422, `${path}[${i}].id`, `Topic \`${id}\` is named twice.`);
    seen.add(id);
    return { id, subscription: choice.subscription };
  });
}
