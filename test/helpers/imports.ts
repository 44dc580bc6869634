import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

// ARCHITECTURE.md "Dependency rules", as data. A file's room is its top folder (mta/<part> for
// the MTA parts); a room may import itself and the rooms listed here, nothing else of ours.
const below = ['config', 'storage', 'dns', 'scanner'];
const coreAndBelow = ['core', ...below];
const mtaParts = ['mta', 'mta/inbound', 'mta/outbound', 'mta/bounces', 'mta/submission'];

/**
 * Core's areas in tiers: an area may import its own tier and the ones before it, never a later one,
 * and another area only through its index.ts. '' is core's own root files (clock, ids, errors…).
 * A new area must be given a tier here.
 */
const coreTiers: readonly (readonly string[])[] = [
  ['', 'api-keys', 'request-logs', 'outbox', 'work'], // foundation
  ['suppressions', 'contacts', 'segments', 'topics', 'team', 'preferences', 'contact-imports'], // audience
  ['templates', 'content-checks'], // content
  ['domains', 'emails', 'webhooks', 'metrics', 'tls-reports', 'tracking'], // sending
  ['broadcasts', 'automations', 'events'], // campaigns
  ['receiving', 'inbox'], // inbox
  ['retention'], // upkeep: ages out what every area keeps
];
const tierOf = (area: string) => coreTiers.findIndex((tier) => tier.includes(area));

/** The MTA parts that may not import each other: inbound, outbound and submission share only mta/bounces. */
const apartParts: Record<string, readonly string[]> = {
  'mta/inbound': ['mta/outbound', 'mta/submission'],
  'mta/outbound': ['mta/inbound', 'mta/submission'],
  'mta/submission': ['mta/inbound', 'mta/outbound'],
};

export const sourceRooms = ['config', 'storage', 'dns', 'scanner', 'net', 'core', 'api', 'mta', 'jobs', 'bin'] as const;

const allowedRooms: Record<string, readonly string[]> = {
  config: [],
  storage: ['config'],
  dns: ['config'],
  scanner: ['config'],
  // Outbound HTTP (webhooks, attachment fetches, DNS provider APIs) is a leaf: it judges addresses
  // through the injected resolver and knows nothing of the product.
  net: ['config', 'dns'],
  core: below,
  api: coreAndBelow,
  // The MTA parts work together (inbound classifies DSNs with the bounces parsers, outbound maps
  // replies with the bounces rules); they are one room towards api and jobs.
  ...Object.fromEntries(mtaParts.map((part) => [part, [...coreAndBelow, ...mtaParts]])),
  jobs: coreAndBelow,
  // bin/svc wires the roles together: it may import every room.
  bin: [...coreAndBelow, 'net', 'api', ...mtaParts, 'jobs'],
};

/** Rooms a room may name in type positions only: core declares ports by net's shapes, bin hands the values in. */
const typeOnlyRooms: Record<string, readonly string[]> = {
  core: ['net'],
};

/** Packages that belong to one layer: the framework stays at the edge, SQL stays in storage. */
const packageRooms: Record<string, readonly string[]> = {
  express: ['api'],
  '@tsoa/runtime': ['api'],
  'smtp-server': mtaParts,
  kysely: ['storage'],
  'better-sqlite3': ['storage'],
  pg: ['storage'],
  ioredis: ['storage'],
  undici: ['net'],
  // multipart bodies are the HTTP layer's to read
  busboy: ['api'],
};

export interface ImportRef {
  specifier: string;
  typeOnly: boolean;
  line: number;
}

export interface Violation {
  /** Path relative to the checked root, with forward slashes. */
  file: string;
  room: string;
  specifier: string;
  /** The room the specifier resolves to, or the package name. */
  target: string;
  line: number;
  reason: string;
}

/** Every module specifier a TypeScript file names: import/export … from, import x = require, import(), import('x').T. */
export function importsOf(fileName: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: ImportRef[] = [];
  const add = (node: ts.Node, specifier: ts.Expression | undefined, typeOnly: boolean) => {
    if (specifier && ts.isStringLiteralLike(specifier)) {
      found.push({ specifier: specifier.text, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const allTypes = !!clause && (clause.isTypeOnly || (!clause.name && !!clause.namedBindings && ts.isNamedImports(clause.namedBindings)
        && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      add(node, node.moduleSpecifier, allTypes);
    } else if (ts.isExportDeclaration(node)) {
      add(node, node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal as ts.Expression, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The room of a path relative to the root: its top folder, or mta/<part>. */
export function roomOf(relPath: string): string {
  const parts = relPath.split(/[\\/]/);
  if (parts[0] === 'mta' && parts.length > 2) return `mta/${parts[1]}`;
  return parts.length > 1 ? parts[0]! : '';
}

/** The package a bare specifier names: 'express' → express, '@tsoa/runtime/x' → @tsoa/runtime. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function* tsFiles(dir: string): Generator<string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // a room that has no files yet
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* tsFiles(path);
    else if (/\.(c|m)?tsx?$/.test(entry.name)) yield path;
  }
}

/** The source files checkImports reads under root. */
export function sourceFiles(root: string): string[] {
  return sourceRooms.flatMap((room) => [...tsFiles(join(root, room))]);
}

/** Checks every .ts file of the source rooms under root against the dependency rules. */
export function checkImports(root: string): Violation[] {
  const absRoot = resolve(root);
  const violations: Violation[] = [];
  for (const path of sourceFiles(absRoot)) {
    const file = relative(absRoot, path).split(sep).join('/');
    const room = roomOf(file);
    for (const ref of importsOf(path, readFileSync(path, 'utf8'))) {
      const base = { file, room, specifier: ref.specifier, line: ref.line };
      if (ref.specifier.startsWith('.') || ref.specifier.startsWith('/')) {
        const targetRel = relative(absRoot, resolve(dirname(path), ref.specifier)).split(sep).join('/');
        const target = targetRel.startsWith('..') ? '(outside the project)' : roomOf(targetRel);
        const areaRule = room === 'core' && target === 'core' ? coreAreaRule(file, targetRel) : undefined;
        if (target === 'storage' && room !== 'storage' && !storageSurface.test(targetRel)) {
          violations.push({ ...base, target: targetRel, reason: 'storage is imported through its kinds\' index.ts (sql, redis, files, repos)' });
        }
        if (areaRule) violations.push({ ...base, target: targetRel, reason: areaRule });
        const apart = !!apartParts[room]?.includes(target);
        if (apart) violations.push({ ...base, target, reason: `${room} may not import ${target}: they share only mta/bounces` });
        if (target === room || apart || allowedRooms[room]?.includes(target)) continue;
        if (ref.typeOnly && typeOnlyRooms[room]?.includes(target)) continue;
        violations.push({ ...base, target, reason: `${room} may not import ${target || '(project root)'}` });
      } else if (!ref.specifier.startsWith('node:')) {
        const pkg = packageOf(ref.specifier);
        const owners = packageRooms[pkg];
        if (!owners || owners.includes(room)) continue;
        violations.push({ ...base, target: pkg, reason: `${pkg} may be imported only in ${owners.join(', ')}` });
      }
    }
  }
  return violations;
}

/** Storage's one import surface per kind. */
const storageSurface = /^storage\/(sql|redis|files|repos)\/index\.(js|ts)$/;

/** Core's area of a path under core/ ('' for core's own root files). */
const areaOf = (relPath: string) => {
  const parts = relPath.split('/');
  return parts.length > 2 ? parts[1]! : '';
};

/** Why an import between two files of core breaks the area rules, or undefined. */
function coreAreaRule(file: string, targetRel: string): string | undefined {
  const [from, to] = [areaOf(file), areaOf(targetRel)];
  if (from === to) return undefined;
  const [fromTier, toTier] = [tierOf(from), tierOf(to)];
  if (fromTier < 0) return `core area '${from}' has no tier in the architecture rules`;
  if (toTier < 0) return `core area '${to}' has no tier in the architecture rules`;
  if (toTier > fromTier) return `core/${from || '(root)'} may not import a later tier's area, core/${to}`;
  if (to !== '' && !/^core\/[^/]+\/index\.(js|ts)$/.test(targetRel)) return `core/${from || '(root)'} may import core/${to} only through its index.ts`;
  return undefined;
}

export const formatViolation = (v: Violation) => `${v.file}:${v.line} imports '${v.specifier}': ${v.reason}`;
