import type { Permission } from '../core/api-keys/index.js';

export interface Operation {
  method: string;
  /** OpenAPI path template, e.g. /api-keys/{id}. */
  template: string;
  permission: Permission;
  scope: string | null;
}

export type Match =
  | { kind: 'operation'; operation: Operation; /** Path parameters by name, still percent-encoded. */ pathParams: Record<string, string> }
  | { kind: 'wrong_method'; allowed: string[] }
  | { kind: 'unknown' };

interface OpenApiDocument {
  paths: Record<string, Record<string, Record<string, unknown>>>;
}

interface PathEntry {
  template: string;
  /** Captures the parameters, in the order of `names`. */
  pattern: RegExp;
  names: string[];
  literalSegments: number;
  segments: number;
  byMethod: Map<string, Operation>;
}

const methods = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * The OpenAPI document is the one source of each route's permission: the matcher built from it
 * tells the auth layer what a request needs, and tells apart an unknown path (404) from a known
 * path with the wrong method (405).
 */
export function operationMatcher(document: OpenApiDocument): (method: string, path: string) => Match {
  const entries = Object.entries(document.paths).map(([template, item]) => toEntry(template, item));
  // Every request is matched before anything else runs: templates without parameters are found
  // by their text, the rest among the templates of the same segment count only.
  const literal = new Map(entries.filter((e) => e.literalSegments === e.segments).map((e) => [e.template, e]));
  const withParameters = new Map<number, PathEntry[]>();
  for (const e of entries.filter((e) => e.literalSegments < e.segments)) {
    withParameters.set(e.segments, [...(withParameters.get(e.segments) ?? []), e]);
  }
  // Literal segments win over parameters: /emails/{id}/cancel before /emails/{id}/{other}.
  for (const group of withParameters.values()) group.sort((a, b) => b.literalSegments - a.literalSegments);
  return (method, path) => {
    const normalised = path.length > 1 ? path.replace(/\/+$/, '') : path;
    const found = findEntry(literal.get(normalised), withParameters.get(segmentCount(normalised)), normalised);
    if (!found) return { kind: 'unknown' };
    const { entry, pathParams } = found;
    const operation = entry.byMethod.get(method.toLowerCase()) ?? (method === 'HEAD' ? entry.byMethod.get('get') : undefined);
    if (!operation) return { kind: 'wrong_method', allowed: [...entry.byMethod.keys()].map((m) => m.toUpperCase()) };
    return { kind: 'operation', operation, pathParams };
  };
}

/** The literal entry, else the first template whose pattern matches, with its parameters. */
function findEntry(literal: PathEntry | undefined, candidates: PathEntry[] | undefined, path: string): { entry: PathEntry; pathParams: Record<string, string> } | undefined {
  if (literal) return { entry: literal, pathParams: {} };
  for (const entry of candidates ?? []) {
    const values = entry.pattern.exec(path);
    if (!values) continue;
    const pathParams: Record<string, string> = {};
    entry.names.forEach((name, i) => { pathParams[name] = values[i + 1]!; });
    return { entry, pathParams };
  }
  return undefined;
}

function segmentCount(path: string): number {
  let count = 0;
  for (const segment of path.split('/')) if (segment) count++;
  return count;
}

function toEntry(template: string, item: Record<string, Record<string, unknown>>): PathEntry {
  const segments = template.split('/').filter(Boolean);
  const pattern = new RegExp('^/' + segments.map((s) => (/^\{.+\}$/.test(s) ? '([^/]+)' : escape(s))).join('/') + '$');
  const names = segments.filter((s) => /^\{.+\}$/.test(s)).map((s) => s.slice(1, -1));
  const byMethod = new Map<string, Operation>();
  for (const method of methods) {
    const op = item[method];
    if (!op) continue;
    byMethod.set(method, {
      method: method.toUpperCase(),
      template,
      permission: requiredPermission(template, method, op['x-svc-permission']),
      scope: (op['x-svc-scope'] as string | null | undefined) ?? null,
    });
  }
  return { template, pattern, names, literalSegments: segments.filter((s) => !s.startsWith('{')).length, segments: segments.length, byMethod };
}

function requiredPermission(template: string, method: string, value: unknown): Permission {
  const known = ['none', 'sending_access', 'full_access', 'session', 'store_access', null];
  if (value === undefined || !known.includes(value as Permission)) {
    throw new Error(`${method.toUpperCase()} ${template} has no valid x-svc-permission extension`);
  }
  return value as Permission;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
