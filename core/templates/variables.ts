import { ServiceError, validationError } from '../errors.js';

// Declared variables: `{ key, type, fallback_value }`, at most 200, each one used and every
// placeholder declared. A send supplies values by key; a value of the wrong type is refused, an
// omitted key takes its fallback, and a key with neither is 422 missing_required_field.

export const VARIABLES_MAX = 200;
export const VARIABLE_KEY_MAX = 100;
export const variableTypes = ['string', 'number', 'boolean', 'object', 'list'] as const;
export type VariableType = (typeof variableTypes)[number];
export type VariableValue = string | number | boolean | Record<string, unknown> | unknown[];

export interface TemplateVariable {
  key: string;
  type: VariableType;
  fallback_value: VariableValue | null;
  created_at: string;
  updated_at: string;
}

const keyPattern = /^[A-Za-z0-9_]+$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The declared list from a request; keys kept from `previous` keep their created_at. */
export function parseVariables(input: unknown, previous: readonly TemplateVariable[], at: string): TemplateVariable[] {
  if (input === undefined || input === null) return [];
  if (!Array.isArray(input)) throw validationError(422, 'variables', '`variables` is a list of `{ key, type, fallback_value }`.');
  if (input.length > VARIABLES_MAX) throw validationError(422, 'variables', `A template declares at most ${VARIABLES_MAX} variables (got ${input.length}).`);
  const seen = new Set<string>();
  return input.map((raw, i) => {
    const path = `variables[${i}]`;
    if (!isObject(raw)) throw validationError(422, path, 'A variable is `{ key, type, fallback_value }`.');
    const { key, type } = raw;
    if (typeof key !== 'string' || !keyPattern.test(key) || key.length > VARIABLE_KEY_MAX) {
      throw validationError(422, `${path}.key`, `A variable key is 1-${VARIABLE_KEY_MAX} ASCII letters, digits or underscores.`);
    }
    if (seen.has(key)) throw validationError(422, `${path}.key`, `The variable \`${key}\` is declared twice.`);
    seen.add(key);
    if (typeof type !== 'string' || !(variableTypes as readonly string[]).includes(type)) {
      throw validationError(422, `${path}.type`, `A variable's type is one of ${variableTypes.join(', ')}.`);
    }
    const fallback = raw.fallback_value ?? raw.fallbackValue ?? null;
    const value = fallback === null ? null : typed(type as VariableType, fallback);
    if (value === undefined) throw validationError(422, `${path}.fallback_value`, `The fallback of \`${key}\` must be a ${type}.`);
    const before = previous.find((v) => v.key === key);
    const same = before && before.type === type && JSON.stringify(before.fallback_value) === JSON.stringify(value);
    return { key, type: type as VariableType, fallback_value: value, created_at: before?.created_at ?? at, updated_at: same ? before.updated_at : at };
  });
}

/** Every placeholder declared and every declared variable used. */
export function checkUsage(declared: readonly TemplateVariable[], used: ReadonlySet<string>, keepUnused = false): void {
  const keys = new Set(declared.map((v) => v.key));
  const undeclared = [...used].filter((k) => !keys.has(k));
  const unused = keepUnused ? [] : [...keys].filter((k) => !used.has(k));
  if (!undeclared.length && !unused.length) return;
  const errors = [
    ...undeclared.map((k) => ({ path: 'variables', message: `\`{{${k}}}\` is used but not declared in \`variables\`.` })),
    ...unused.map((k) => ({ path: `variables.${k}`, message: `\`${k}\` is declared but no placeholder uses it.` })),
  ];
  throw new ServiceError(422, 'validation_error', errors.map((e) => e.message).join(' '), { errors });
}

/**
 * A value as its type reads it, or undefined when it cannot be one. Sends supply strings or
 * numbers; a boolean may come as true/false or their text, an object or list as itself or JSON text.
 */
export function typed(type: VariableType, value: unknown): VariableValue | undefined {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : undefined;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
    case 'boolean':
      return typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : undefined;
    case 'object': {
      const v = typeof value === 'string' ? parseJson(value) : value;
      return isObject(v) ? v : undefined;
    }
    case 'list': {
      const v = typeof value === 'string' ? parseJson(value) : value;
      return Array.isArray(v) ? v : undefined;
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A value's text: numbers and booleans as written, objects and lists as compact JSON. */
export function display(value: VariableValue): string {
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * The text of every declared variable for one send. `lenient` (previews, checks): a key with no
 * value renders empty and is reported in `missing` instead of refusing.
 */
export function valuesForSend(
  declared: readonly TemplateVariable[], given: unknown, lenient = false,
): { values: Map<string, string>; missing: string[] } {
  if (given !== undefined && given !== null && !isObject(given)) throw validationError(422, 'template.variables', '`template.variables` is an object of values by key.');
  const supplied = (given ?? {}) as Record<string, unknown>;
  const keys = new Set(declared.map((v) => v.key));
  for (const key of Object.keys(supplied)) {
    if (!keys.has(key)) throw validationError(422, `template.variables.${key}`, `The template declares no variable \`${key}\`.`);
  }
  const values = new Map<string, string>();
  const missing: string[] = [];
  for (const v of declared) {
    const raw = supplied[v.key];
    if (raw === undefined || raw === null) {
      if (v.fallback_value !== null) values.set(v.key, display(v.fallback_value));
      else if (lenient) missing.push(v.key);
      else throw new ServiceError(422, 'missing_required_field', `The template variable \`${v.key}\` has no value and no fallback.`, { errors: [{ path: `template.variables.${v.key}`, message: 'is required' }] });
      continue;
    }
    const value = typed(v.type, raw);
    if (value === undefined) throw validationError(422, `template.variables.${v.key}`, `\`${v.key}\` is a ${v.type} variable; the value given is not one.`);
    values.set(v.key, display(value));
  }
  return { values, missing };
}
