import type { TemplateVersionRow } from '../../storage/repos/index.js';
import { ServiceError, validationError } from '../errors.js';
import { compileVersion, usedVariables } from './compiled.js';
import { withSavedBlocks, type SavedBlockLookup } from './saved-refs.js';
import { starterBySlug, starters, type Starter } from './starters.js';
import { checkUsage, parseVariables, type TemplateVariable } from './variables.js';
import { compileLayout, parseLayout } from './visual.js';

// A version's content from a create or update request: given as HTML, or as a visual layout
// (or a starter's) compiled here once. Every placeholder is read and checked before it is saved.

export const HTML_MAX = 1_000_000;
const SUBJECT_MAX_BYTES = 998;
const REPLY_TO_MAX = 50;

export interface ContentInput {
  from?: string | null;
  subject?: string | null;
  reply_to?: string | string[] | null;
  html?: string | null;
  text?: string | null;
  variables?: unknown;
  layout?: unknown;
  starter?: string | null;
}

export type VersionContent = Pick<TemplateVersionRow,
  'from_header' | 'subject' | 'reply_to_json' | 'preview_text' | 'html' | 'text' | 'variables_json' | 'layout_json' | 'starter'>;

/** A stored version's content alone (to copy it into another version). */
export const contentOf = (row: TemplateVersionRow): VersionContent => ({
  from_header: row.from_header, subject: row.subject, reply_to_json: row.reply_to_json, preview_text: row.preview_text, html: row.html,
  text: row.text, variables_json: row.variables_json, layout_json: row.layout_json, starter: row.starter,
});

const contentKeys = ['from', 'subject', 'reply_to', 'html', 'text', 'variables', 'layout'] as const;

/** Whether the request changes the version's content (not only the name or alias). */
export const changesContent = (input: ContentInput) => contentKeys.some((k) => input[k] !== undefined);

export interface BuildOptions {
  /** The team's saved blocks, for references in a layout. */
  savedBlocks: SavedBlockLookup;
  /** A saved block's edit rewriting its copies: a declared variable the layout no longer uses may stay. */
  keepUnused?: boolean;
}

/** The new content: `base` (the version being edited, or nothing) with the request over it, checked whole. */
export async function buildContent(input: ContentInput, base: VersionContent | null, at: string, options: BuildOptions): Promise<VersionContent> {
  const starter = starterOf(input.starter);
  const previous = base ? JSON.parse(base.variables_json) as TemplateVariable[] : [];
  const variables = input.variables !== undefined ? parseVariables(input.variables, previous, at)
    : starter ? parseVariables(starter.variables, [], at) : previous;
  const content: VersionContent = {
    from_header: input.from !== undefined ? oneLine('from', input.from, 998) : base?.from_header ?? null,
    subject: input.subject !== undefined ? subjectOf(input.subject) : starter ? starter.subject : base?.subject ?? null,
    reply_to_json: input.reply_to !== undefined ? replyToOf(input.reply_to) : base?.reply_to_json ?? null,
    preview_text: base?.preview_text ?? null,
    html: base?.html ?? '',
    text: input.text !== undefined ? textOf(input.text) : base?.text ?? null,
    variables_json: JSON.stringify(variables),
    layout_json: base?.layout_json ?? null,
    starter: starter?.slug ?? base?.starter ?? null,
  };
  await applyBody(content, input, input.layout ?? starter?.layout, options.savedBlocks);
  if (content.html === '') throw new ServiceError(422, 'missing_required_field', 'Missing `html` field: send `html` or a `starter`.', { errors: [{ path: 'html', message: 'is required' }] });
  const compiled = compileVersion({ ...content, id: 'check', template_id: '', team_id: '', number: 0, created_at: at, updated_at: at, published_at: null });
  checkUsage(variables, usedVariables(compiled), options.keepUnused);
  return content;
}

function starterOf(slug: string | null | undefined): Starter | undefined {
  if (slug === undefined || slug === null) return undefined;
  const starter = starterBySlug(slug);
  if (!starter) throw validationError(422, 'starter', `No starter is named ${JSON.stringify(slug)}; there are ${starters.map((s) => s.slug).join(', ')}.`);
  return starter;
}

/** The body: HTML as given, or a layout (saved blocks copied in) compiled with its text part. */
async function applyBody(content: VersionContent, input: ContentInput, layout: unknown, savedBlocks: SavedBlockLookup): Promise<void> {
  if (input.html !== undefined && input.html !== null) {
    if (typeof input.html !== 'string' || input.html.trim() === '' || input.html.length > HTML_MAX) throw validationError(422, 'html', `\`html\` is 1-${HTML_MAX} characters.`);
    Object.assign(content, { html: input.html, layout_json: null, preview_text: null, starter: null });
  } else if (layout !== undefined && layout !== null) {
    const parsed = parseLayout((await withSavedBlocks(layout, savedBlocks)).layout);
    const compiled = await compileLayout(parsed);
    Object.assign(content, { html: compiled.html, text: compiled.text, preview_text: compiled.preheader, layout_json: JSON.stringify(parsed) });
  }
}

function oneLine(path: string, value: unknown, max: number): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || /[\r\n\0]/.test(value) || value.length > max) throw validationError(422, path, `\`${path}\` is one line of at most ${max} characters.`);
  return value;
}

function subjectOf(value: unknown): string | null {
  const subject = oneLine('subject', value, SUBJECT_MAX_BYTES);
  if (subject !== null && Buffer.byteLength(subject) > SUBJECT_MAX_BYTES) throw validationError(422, 'subject', `\`subject\` is at most ${SUBJECT_MAX_BYTES} bytes of UTF-8.`);
  return subject;
}

function textOf(value: unknown): string | null {
  if (value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > HTML_MAX) throw validationError(422, 'text', `\`text\` is at most ${HTML_MAX} characters.`);
  return value;
}

function replyToOf(value: unknown): string | null {
  if (value === null) return null;
  const list = Array.isArray(value) ? value : [value];
  if (list.length > REPLY_TO_MAX) throw validationError(422, 'reply_to', `\`reply_to\` holds at most ${REPLY_TO_MAX} addresses.`);
  list.forEach((v, i) => oneLine(`reply_to[${i}]`, v, 998));
  return list.length ? JSON.stringify(list) : null;
}
