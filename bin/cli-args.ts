import { parseArgs } from 'node:util';

// Every svc command line is read here, by node's parseArgs in strict mode: an unknown option, a
// missing or unknown value, or a stray argument is a UsageError — one line on stderr and exit 2 —
// never silently ignored (a mistyped `--rol api` once started every role, port 25 included).

/** A command line svc cannot read: one line on stderr, exit code 2. */
export class UsageError extends Error {}

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** One line for --help. */
  doc: string;
  /** Placeholder shown in the usage line (string options). */
  arg?: string;
  /** The only values a string option may take. */
  values?: readonly string[];
  /** A further check of a string value: the problem, or undefined when it is good. */
  check?: (value: string) => string | undefined;
  required?: boolean;
}

export interface CommandSpec {
  /** As the operator types it: `svc start`, `svc admin key create`. */
  name: string;
  /** One line: what the command does. */
  summary: string;
  /** Positional arguments as shown in the usage line, e.g. `[PATH]`. */
  args?: string;
  minArgs?: number;
  maxArgs?: number;
  options?: Record<string, OptionSpec>;
  /** Further lines of help after the options. */
  notes?: string;
}

export type Values = Record<string, string | boolean | undefined>;
export type Parsed = { help: true } | { help: false; values: Values; positionals: string[] };

const isHelp = (arg: string) => arg === '--help' || arg === '-h';

/** Reads `args` (what follows the command's own words) against its spec. */
export function parseCommand(spec: CommandSpec, args: readonly string[]): Parsed {
  const end = args.indexOf('--');
  if ((end < 0 ? args : args.slice(0, end)).some(isHelp)) return { help: true };
  const options = Object.fromEntries(Object.entries(spec.options ?? {}).map(([name, o]) => [name, { type: o.type }]));
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: (spec.maxArgs ?? 0) > 0 }) as typeof parsed;
  } catch (err) {
    throw new UsageError(`${spec.name}: ${parseProblem(spec, err as NodeJS.ErrnoException)} (see ${spec.name} --help)`);
  }
  checkValues(spec, parsed.values);
  checkCount(spec, parsed.positionals);
  return { help: false, ...parsed };
}

function parseProblem(spec: CommandSpec, err: NodeJS.ErrnoException): string {
  const named = /'(-[^' ]+)/.exec(err.message)?.[1] ?? '';
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const near = named.length > 2 ? Object.keys(spec.options ?? {}).filter((o) => `--${o}`.startsWith(named) || named.startsWith(`--${o}`)) : [];
      return `unknown option ${named}${near.length === 1 ? ` (did you mean --${near[0]}?)` : ''}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return spec.options?.[named.replace(/^--?/, '')]?.type === 'boolean' ? `${named} takes no value` : `${named} needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument "${/'([^']*)'/.exec(err.message)?.[1] ?? ''}"`;
    default:
      return err.message.split('\n')[0]!;
  }
}

function checkValues(spec: CommandSpec, values: Values): void {
  for (const [name, option] of Object.entries(spec.options ?? {})) {
    const value = values[name];
    if (value === undefined) {
      if (option.required) throw new UsageError(`${spec.name}: --${name} is required (see ${spec.name} --help)`);
      continue;
    }
    if (typeof value !== 'string') continue;
    const problem = value === '' ? 'needs a value'
      : option.values && !option.values.includes(value) ? `unknown value "${value}"; one of ${option.values.join(', ')}`
        : option.check?.(value);
    if (problem) throw new UsageError(`${spec.name}: --${name}: ${problem}`);
  }
}

function checkCount(spec: CommandSpec, positionals: string[]): void {
  const min = spec.minArgs ?? 0;
  const max = spec.maxArgs ?? 0;
  if (positionals.length < min) throw new UsageError(`${spec.name}: ${spec.args ?? 'an argument'} is needed (see ${spec.name} --help)`);
  if (positionals.length > max) throw new UsageError(`${spec.name}: unexpected argument "${positionals[max]}" (see ${spec.name} --help)`);
}

const placeholder = (o: OptionSpec) => (o.values ? o.values.join('|') : o.arg ?? 'VALUE');

/** The usage line: `svc admin key list [--team TEAM]`. */
export function usageLine(spec: CommandSpec): string {
  const parts = [spec.name];
  for (const [name, o] of Object.entries(spec.options ?? {})) {
    const shown = o.type === 'boolean' ? `--${name}` : `--${name} ${placeholder(o)}`;
    parts.push(o.required ? shown : `[${shown}]`);
  }
  if (spec.args) parts.push(spec.args);
  return parts.join(' ');
}

/** What `--help` prints. */
export function helpText(spec: CommandSpec): string {
  const rows = Object.entries(spec.options ?? {}).map(([name, o]) => [`--${name}${o.type === 'string' ? ` ${placeholder(o)}` : ''}`, o.doc]);
  rows.push(['-h, --help', 'this help']);
  const width = Math.max(...rows.map(([left]) => left!.length)) + 2;
  return [
    `usage: ${usageLine(spec)}`, '', spec.summary, '', 'options:',
    ...rows.map(([left, doc]) => `  ${left!.padEnd(width)}${doc}`),
    ...(spec.notes ? ['', spec.notes] : []),
  ].join('\n') + '\n';
}

/** A group's help: each command's usage line and summary (`svc admin --help`). */
export function groupHelp(title: string, specs: readonly CommandSpec[], footer?: string): string {
  return [title, '', ...specs.flatMap((s) => [`  ${usageLine(s)}`, `      ${s.summary}`]), ...(footer ? ['', footer] : [])].join('\n') + '\n';
}
