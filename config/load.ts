import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { schema, envName, type Config, type ConfigKey, type KeySpec } from './schema.js';
import { checkRegionOverrides, type RegionOverrides } from './regions.js';
import { checkPlans, type PlanSpec } from './plans.js';
import { fqdnProblem, withoutRootDot } from './hostname.js';

/** A bad setting: start-up stops with this one line. */
export class ConfigError extends Error {
  constructor(readonly key: string, problem: string) {
    super(`config: ${key}: ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

/** File (SVC_CONFIG) then SVC_* environment, validated against the schema, frozen. */
export function loadConfig(env: Env = process.env): Config {
  const fromFile = readConfigFile(env.SVC_CONFIG);
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(schema) as [ConfigKey, KeySpec][]) {
    out[key] = spec.default;
    if (key in fromFile) out[key] = parseValue(key, spec, fromFile[key], 'file');
    const fromEnv = env[envName(key)];
    if (fromEnv !== undefined) out[key] = parseValue(key, spec, fromEnv, 'env');
  }
  rejectUnknownEnv(env);
  out.data_dir = resolve(String(out.data_dir));
  return Object.freeze(out) as unknown as Config;
}

function readConfigFile(path: string | undefined): Record<string, unknown> {
  if (!path) return {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('SVC_CONFIG', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError('SVC_CONFIG', `${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError('SVC_CONFIG', `${path} must hold one JSON object`);
  }
  for (const key of Object.keys(parsed)) {
    if (!Object.hasOwn(schema, key)) throw new ConfigError(key, `unknown key in ${path}`);
  }
  return parsed as Record<string, unknown>;
}

// SVC_CONFIG names the file; every other SVC_ variable must be a key, so a typo stops start-up.
function rejectUnknownEnv(env: Env): void {
  const known = new Set(Object.keys(schema).map(envName));
  known.add('SVC_CONFIG');
  for (const name of Object.keys(env)) {
    if (name.startsWith('SVC_') && !known.has(name)) {
      throw new ConfigError(name, 'unknown setting (the SVC_ prefix is reserved for svc\'s settings; see `svc config print` for the keys)');
    }
  }
}

function parseValue(key: string, spec: KeySpec, raw: unknown, from: 'file' | 'env'): unknown {
  const where = from === 'env' ? envName(key) : key;
  switch (spec.type) {
    case 'string': {
      if (typeof raw !== 'string') throw new ConfigError(where, 'must be a string');
      const problem = spec.hostname && raw !== '' ? fqdnProblem(raw) : undefined;
      if (problem) throw new ConfigError(where, `must be a fully qualified host name like mail.example.com; "${raw}" is ${problem}`);
      return spec.hostname ? withoutRootDot(raw) : raw;
    }
    case 'int':
      return parseInt(where, spec, raw);
    case 'bool':
      return parseBool(where, raw);
    case 'enum': {
      const value = String(raw);
      if (typeof raw !== 'string' || !spec.values.includes(value)) throw new ConfigError(where, `must be one of ${spec.values.join(', ')}; got "${value}"`);
      return value;
    }
    case 'list':
      return parseList(where, raw);
    case 'regions':
      return parseRegions(where, raw);
    case 'plans':
      return parsePlans(where, raw);
  }
}

function parseInt(where: string, spec: Extract<KeySpec, { type: 'int' }>, raw: unknown): number {
  const value = typeof raw === 'number' ? raw : /^-?\d+$/.test(String(raw).trim()) ? Number(String(raw).trim()) : NaN;
  if (!Number.isSafeInteger(value)) throw new ConfigError(where, `must be a whole number; got "${String(raw)}"`);
  if (spec.min !== undefined && value < spec.min) throw new ConfigError(where, `must be at least ${spec.min}; got ${value}`);
  if (spec.max !== undefined && value > spec.max) throw new ConfigError(where, `must be at most ${spec.max}; got ${value}`);
  return value;
}

function parseBool(where: string, raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  const text = String(raw).trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(text)) return true;
  if (['false', '0', 'no', 'off', ''].includes(text)) return false;
  throw new ConfigError(where, `must be true or false; got "${String(raw)}"`);
}

function parseList(where: string, raw: unknown): readonly string[] {
  if (Array.isArray(raw)) {
    if (!raw.every((item) => typeof item === 'string')) throw new ConfigError(where, 'must be a list of strings');
    return Object.freeze([...raw]);
  }
  if (typeof raw !== 'string') throw new ConfigError(where, 'must be a comma-separated string or a list');
  return Object.freeze(raw.split(',').map((s) => s.trim()).filter(Boolean));
}

// From the environment the value is JSON text; from the file it is already an object.
function parseRegions(where: string, raw: unknown): RegionOverrides {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ConfigError(where, 'must be a JSON object keyed by region');
    }
  }
  const problem = checkRegionOverrides(value);
  if (problem) throw new ConfigError(where, problem);
  return Object.freeze(value as RegionOverrides);
}

function parsePlans(where: string, raw: unknown): readonly PlanSpec[] {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ConfigError(where, 'must be a JSON array of plans');
    }
  }
  const problem = checkPlans(value);
  if (problem) throw new ConfigError(where, problem);
  return Object.freeze(structuredClone(value) as PlanSpec[]);
}

/** `svc config print`: every key, its effective value and its doc. Secrets are masked. */
export function describeConfig(config: Config): string {
  const lines: string[] = [];
  for (const [key, spec] of Object.entries(schema) as [ConfigKey, KeySpec][]) {
    const value = config[key];
    const shown = 'secret' in spec && spec.secret && value ? '<set>' : JSON.stringify(value);
    lines.push(`# ${spec.doc} (env ${envName(key)}, default ${JSON.stringify(spec.default)})`);
    lines.push(`${key} = ${shown}`);
  }
  return lines.join('\n') + '\n';
}
