import type { TemplateVersionRow } from '../../storage/repos/index.js';
import { compileText, type Program } from './placeholders.js';
import { render, type Markers, type RenderValues } from './render.js';
import type { TemplateVariable } from './variables.js';
import { layoutMarkers, type Layout } from './visual.js';

// A version read into programs once and kept in memory by (id, updated_at): a version changes
// only while it is a draft, or when a saved block it uses is edited, and either moves updated_at.
// Rendering a recipient then costs a walk of these programs.

export interface CompiledVersion {
  id: string;
  number: number;
  from: string | null;
  replyTo: string[] | null;
  subject: Program | null;
  html: Program;
  text: Program | null;
  previewText: string | null;
  variables: TemplateVariable[];
  markers: Markers;
  visual: boolean;
}

export interface RenderedContent {
  subject: string | null;
  html: string;
  text: string | null;
}

const noMarkers: Markers = { conditions: new Map(), repeats: new Map() };
const cacheMax = 1000;
const cache = new Map<string, CompiledVersion>();

/** The version's programs, compiled at most once per content. Throws 422 for unreadable slots (a save checks first). */
export function compiledVersion(row: TemplateVersionRow): CompiledVersion {
  const key = `${row.id}@${row.updated_at}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const compiled = compileVersion(row);
  cache.set(key, compiled);
  if (cache.size > cacheMax) cache.delete(cache.keys().next().value!);
  return compiled;
}

export function compileVersion(row: TemplateVersionRow): CompiledVersion {
  const visual = row.layout_json !== null;
  return {
    id: row.id,
    number: row.number,
    from: row.from_header,
    replyTo: row.reply_to_json ? JSON.parse(row.reply_to_json) as string[] : null,
    subject: row.subject === null ? null : compileText(row.subject, 'subject', false),
    html: compileText(row.html, visual ? 'layout' : 'html', visual),
    text: row.text === null ? null : compileText(row.text, visual ? 'layout' : 'text', visual),
    previewText: row.preview_text,
    variables: JSON.parse(row.variables_json) as TemplateVariable[],
    markers: visual ? layoutMarkers(JSON.parse(row.layout_json!) as Layout) : noMarkers,
    visual,
  };
}

/** Every declared-variable key the version's texts use. */
export function usedVariables(version: CompiledVersion): Set<string> {
  const used = new Set<string>();
  for (const program of [version.subject, version.html, version.text]) for (const key of program?.variables ?? []) used.add(key);
  return used;
}

export function renderVersion(version: CompiledVersion, values: RenderValues): RenderedContent {
  return {
    subject: version.subject ? render(version.subject.nodes, false, values, version.markers) : null,
    html: render(version.html.nodes, true, values, version.markers),
    text: version.text ? render(version.text.nodes, false, values, version.markers) : null,
  };
}
