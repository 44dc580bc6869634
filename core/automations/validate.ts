import type { Db } from '../../storage/sql/index.js';
import { contactPropertiesRepo, eventDefinitionsRepo, segmentsRepo, topicsRepo } from '../../storage/repos/index.js';
import { refuseAll } from '../events/index.js';
import { checkConfig, type Ref } from './configs.js';
import { checkStructure, Problems, readGraph, type Graph } from './graph.js';
import type { TemplateSender } from './ports.js';

// The whole graph at once against the team (spec Automation): shape, structure, each config, and
// every template, segment, topic, property and custom event named; a failure is 422
// validation_error with one `errors[]` entry per offending step key. A property a contact_update
// sets may be new (it is declared when the step runs).

export interface CheckedGraph {
  graph: Graph;
  triggerEvent: string;
  exitEvents: string[];
}

export async function validateGraph(
  db: Db, templates: TemplateSender, teamId: string, rawSteps: unknown, rawConnections: unknown, now: Date,
): Promise<CheckedGraph> {
  const problems = new Problems();
  const { steps, connections } = readGraph(rawSteps, rawConnections, problems);
  const refs: Ref[] = [];
  for (const step of steps) checkConfig(step, problems, refs, now);
  const graph = checkStructure(steps, connections, problems);
  await resolveRefs(db, templates, teamId, refs, problems);
  if (problems.size || !graph) throw refuseAll(problems.errors());
  const config = graph.trigger.config;
  return { graph, triggerEvent: config.event_name as string, exitEvents: [...new Set((config.exit_events as string[] | undefined) ?? [])] };
}

async function resolveRefs(db: Db, templates: TemplateSender, teamId: string, refs: Ref[], problems: Problems): Promise<void> {
  const of = (kind: Ref['kind']) => [...new Set(refs.filter((r) => r.kind === kind).map((r) => r.value))];
  const [segments, topics, properties, events] = await Promise.all([
    segmentsRepo(db).byIds(teamId, of('segment')),
    topicsRepo(db).byIds(teamId, of('topic')),
    contactPropertiesRepo(db).byKeys(teamId, of('property')),
    eventDefinitionsRepo(db).byNames(teamId, of('event')),
  ]);
  const known = {
    segment: new Set(segments.map((s) => s.id)),
    topic: new Set(topics.map((t) => t.id)),
    property: new Set(properties.map((p) => p.key_fold)),
    event: new Set(events.map((e) => e.name)),
    template: new Set<string>(),
  };
  for (const id of of('template')) if (await templates.exists(teamId, id)) known.template.add(id);
  for (const ref of refs) {
    const value = ref.kind === 'property' ? ref.value.toLowerCase() : ref.value;
    if (known[ref.kind].has(value)) continue;
    const what = ref.kind === 'template' ? 'published template' : ref.kind === 'event' ? 'custom event' : ref.kind === 'property' ? 'declared contact property' : ref.kind;
    problems.add(ref.key, `No ${what} \`${ref.value}\`.`);
  }
}
