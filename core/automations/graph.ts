import type { FieldError } from '../errors.js';

// An automation's graph (spec Automation): at most 150 steps with unique keys, exactly one
// trigger, every other step reachable from it, acyclic; one outgoing edge per step except a
// condition's two branches. Problems are collected per step key, so a caller sees them all.

export const STEPS_MAX = 150;

export const stepTypes = ['trigger', 'send_email', 'delay', 'condition', 'contact_update', 'add_to_segment', 'topic_update'] as const;
export type StepType = (typeof stepTypes)[number];
export const connectionTypes = ['default', 'condition_met', 'condition_not_met'] as const;
export type ConnectionType = (typeof connectionTypes)[number];

/** Refused in this release (spec: with their `timeout` and `event_received` connections). */
const refusedTypes = new Set(['wait_for_event', 'contact_delete']);
const refusedConnections = new Set(['timeout', 'event_received']);

export interface Step {
  key: string;
  type: StepType;
  config: Record<string, unknown>;
}

export interface Connection {
  from: string;
  to: string;
  type: ConnectionType;
}

export interface Graph {
  steps: Step[];
  connections: Connection[];
  byKey: Map<string, Step>;
  trigger: Step;
  /** The step after `key` along an edge of this type; null at the end of a path. */
  next(key: string, type?: ConnectionType): string | null;
  /** Step keys in graph order: a walk from the trigger, `condition_met` before `condition_not_met`. */
  order: string[];
}

/** Problems by step key (`''`: the graph as a whole). */
export class Problems {
  private readonly byKey = new Map<string, string[]>();
  add(key: string, message: string): void {
    const list = this.byKey.get(key) ?? [];
    list.push(message);
    this.byKey.set(key, list);
  }
  get size(): number {
    return this.byKey.size;
  }
  has(key: string): boolean {
    return this.byKey.has(key);
  }
  /** One `errors[]` entry per offending step key. */
  errors(): FieldError[] {
    return [...this.byKey].map(([key, messages]) => ({ path: key === '' ? 'steps' : `steps.${key}`, message: messages.join(' ') }));
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads the steps and connections as sent; the shape problems go to `problems`. */
export function readGraph(rawSteps: unknown, rawConnections: unknown, problems: Problems): { steps: Step[]; connections: Connection[] } {
  const steps: Step[] = [];
  const connections: Connection[] = [];
  if (!Array.isArray(rawSteps) || rawSteps.length === 0) problems.add('', '`steps` must be a non-empty array.');
  else if (rawSteps.length > STEPS_MAX) problems.add('', `An automation has at most ${STEPS_MAX} steps (got ${rawSteps.length}).`);
  if (!Array.isArray(rawConnections)) problems.add('', '`connections` must be an array.');
  if (problems.size) return { steps, connections };
  const seen = new Set<string>();
  (rawSteps as unknown[]).forEach((raw, i) => {
    const key = isObject(raw) && typeof raw.key === 'string' && raw.key.length > 0 && raw.key.length <= 100 ? raw.key : `[${i}]`;
    if (!isObject(raw) || key === `[${i}]`) return problems.add(key, 'A step is `{ key, type, config }` with a key of 1-100 characters.');
    if (seen.has(key)) return problems.add(key, `The key \`${key}\` is used by more than one step.`);
    seen.add(key);
    const type = raw.type;
    if (typeof type === 'string' && refusedTypes.has(type)) return problems.add(key, `\`${type}\` steps are not available in this release.`);
    if (typeof type !== 'string' || !(stepTypes as readonly string[]).includes(type)) return problems.add(key, `\`type\` must be one of ${stepTypes.join(', ')}.`);
    const config = raw.config ?? {};
    if (!isObject(config)) return problems.add(key, '`config` must be an object.');
    for (const extra of Object.keys(raw).filter((k) => !['key', 'type', 'config'].includes(k))) problems.add(key, `Unknown field \`${extra}\`.`);
    steps.push({ key, type: type as StepType, config });
  });
  for (const raw of rawConnections as unknown[]) {
    if (!isObject(raw) || typeof raw.from !== 'string' || typeof raw.to !== 'string') {
      problems.add('', 'A connection is `{ from, to, type }` naming two step keys.');
      continue;
    }
    const type = raw.type ?? 'default';
    if (typeof type === 'string' && refusedConnections.has(type)) problems.add(raw.from, `\`${type}\` connections are not available in this release.`);
    else if (typeof type !== 'string' || !(connectionTypes as readonly string[]).includes(type)) problems.add(raw.from, `A connection's \`type\` is one of ${connectionTypes.join(', ')}.`);
    else connections.push({ from: raw.from, to: raw.to, type: type as ConnectionType });
  }
  return { steps, connections };
}

/** The structural rules; answers the graph when they hold. */
export function checkStructure(steps: Step[], connections: Connection[], problems: Problems): Graph | undefined {
  const byKey = new Map(steps.map((s) => [s.key, s]));
  const triggers = steps.filter((s) => s.type === 'trigger');
  if (triggers.length === 0) problems.add('', 'An automation has exactly one `trigger` step.');
  for (const extra of triggers.slice(1)) problems.add(extra.key, 'An automation has exactly one `trigger` step.');
  const outgoing = new Map<string, Connection[]>();
  for (const c of connections) {
    if (!byKey.has(c.from)) { problems.add(c.from, `A connection starts at \`${c.from}\`, which is no step.`); continue; }
    if (!byKey.has(c.to)) { problems.add(c.from, `A connection leads to \`${c.to}\`, which is no step.`); continue; }
    if (byKey.get(c.to)!.type === 'trigger') problems.add(c.from, 'No connection may lead to the trigger.');
    outgoing.set(c.from, [...(outgoing.get(c.from) ?? []), c]);
  }
  for (const [from, edges] of outgoing) checkEdges(byKey.get(from)!, edges, problems);
  if (triggers.length !== 1 || problems.size) return undefined;
  const trigger = triggers[0]!;
  const next = (key: string, type: ConnectionType = 'default') => (outgoing.get(key) ?? []).find((c) => c.type === type)?.to ?? null;
  const order = walk(trigger.key, outgoing, problems);
  for (const s of steps) if (!order.includes(s.key)) problems.add(s.key, `Step \`${s.key}\` cannot be reached from the trigger.`);
  if (problems.size) return undefined;
  return { steps, connections, byKey, trigger, next, order };
}

function checkEdges(step: Step, edges: Connection[], problems: Problems): void {
  if (step.type !== 'condition') {
    if (edges.length > 1) problems.add(step.key, 'A step other than a condition has at most one outgoing connection.');
    if (edges.some((e) => e.type !== 'default')) problems.add(step.key, 'Only a condition takes `condition_met` and `condition_not_met` connections.');
    return;
  }
  if (edges.some((e) => e.type === 'default')) problems.add(step.key, 'A condition takes `condition_met` and `condition_not_met` connections, not `default`.');
  for (const type of ['condition_met', 'condition_not_met'] as const) {
    if (edges.filter((e) => e.type === type).length > 1) problems.add(step.key, `A condition has at most one \`${type}\` connection.`);
  }
}

/** Depth-first from the trigger (met before not met); a cycle is a problem at the step closing it. */
function walk(start: string, outgoing: Map<string, Connection[]>, problems: Problems): string[] {
  const order: string[] = [];
  const onPath = new Set<string>();
  const done = new Set<string>();
  const rank = (c: Connection) => connectionTypes.indexOf(c.type);
  const visit = (key: string) => {
    if (onPath.has(key)) return problems.add(key, `Step \`${key}\` is part of a cycle.`);
    if (done.has(key)) return;
    onPath.add(key);
    order.push(key);
    for (const edge of [...(outgoing.get(key) ?? [])].sort((a, b) => rank(a) - rank(b))) visit(edge.to);
    onPath.delete(key);
    done.add(key);
  };
  visit(start);
  return order;
}

/** A stored version's graph (checked when it was written). */
export function graphOf(steps: Step[], connections: Connection[]): Graph {
  const problems = new Problems();
  const graph = checkStructure(steps, connections, problems);
  if (!graph) throw new Error(`automations: a stored graph fails its checks: ${JSON.stringify(problems.errors())}`);
  return graph;
}
