import { compile as textCompiler } from 'html-to-text';
import { validationError } from '../errors.js';
import { blockKinds, blockMjml, type Block, type BlockWriter } from './blocks.js';
import type { Condition, Markers } from './render.js';
import { escapeHtml } from './render.js';
import { sanitizeHtmlBlock } from './sanitize.js';
import { parseShowWhen } from './show-when.js';

// A visual template's layout: sections of one to three columns of blocks, compiled with MJML
// into client-safe HTML when the version is saved (never per recipient), and its text part made
// from that HTML. Show-when rules and repeat groups become markers in both (`<!--svc:if:N-->`),
// which the placeholder compiler reads; the same walk of the layout gives each marker its meaning.

export const SECTIONS_MAX = 100;
export const BLOCKS_MAX = 300;

export interface Layout {
  background_color?: string;
  sections: Section[];
}

export interface Section {
  columns: Block[][];
  background_color?: string;
  show_when?: unknown;
  /** A repeat group: the section drawn once per item of this list (`event.items`). */
  repeat?: string;
  saved_block_id?: string;
}

export interface CompiledLayout {
  html: string;
  text: string;
  preheader: string | null;
  markers: Markers;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const colour = (v: unknown, fallback: string) => (typeof v === 'string' && /^#[0-9a-fA-F]{6}$/.test(v) ? v : fallback);

/** The layout's shape checked: sections, columns, known block kinds, one preheader and first. */
export function parseLayout(raw: unknown): Layout {
  if (!isObject(raw) || !Array.isArray(raw.sections) || raw.sections.length === 0) throw validationError(422, 'layout', '`layout` is `{ sections: [{ columns: [[block, …]] }] }`.');
  if (raw.sections.length > SECTIONS_MAX) throw validationError(422, 'layout.sections', `A layout has at most ${SECTIONS_MAX} sections.`);
  let blocks = 0;
  raw.sections.forEach((section: unknown, s: number) => {
    const path = `layout.sections[${s}]`;
    if (!isObject(section) || !Array.isArray(section.columns) || section.columns.length < 1 || section.columns.length > 3) {
      throw validationError(422, `${path}.columns`, 'A section has one to three columns, each a list of blocks.');
    }
    if (section.repeat !== undefined && (typeof section.repeat !== 'string' || !/^event(\.[A-Za-z0-9_]+)+$/.test(section.repeat))) {
      throw validationError(422, `${path}.repeat`, '`repeat` names a list of the trigger event, such as `event.items`.');
    }
    section.columns.forEach((column: unknown, c: number) => {
      if (!Array.isArray(column)) throw validationError(422, `${path}.columns[${c}]`, 'A column is a list of blocks.');
      column.forEach((block: unknown, b: number) => {
        const at = `${path}.columns[${c}][${b}]`;
        if (!isObject(block) || !(blockKinds as readonly unknown[]).includes(block.type)) throw validationError(422, `${at}.type`, `A block's type is one of ${blockKinds.join(', ')}.`);
        if (block.type === 'preheader' && (s !== 0 || c !== 0 || b !== 0)) throw validationError(422, at, 'The preheader is the first block, and there is one per email.');
        blocks++;
      });
    });
  });
  if (blocks > BLOCKS_MAX) throw validationError(422, 'layout', `A layout has at most ${BLOCKS_MAX} blocks.`);
  return raw as unknown as Layout;
}

/** The layout as MJML, with the markers' meanings. `htmlBlocks`: the sanitised html blocks by path. */
export function layoutMjml(layout: Layout, htmlBlocks: ReadonlyMap<string, string>): { mjml: string; markers: Markers; preheader: string | null } {
  const conditions = new Map<number, Condition>();
  const repeats = new Map<number, string[]>();
  let next = 0;
  const wrap = (kind: 'if' | 'each', body: string) => {
    const id = ++next;
    return { id, text: `<mj-raw><!--svc:${kind}:${id}--></mj-raw>${body}<mj-raw><!--svc:end:${id}--></mj-raw>` };
  };
  const writer = (path: string): BlockWriter => ({
    when(condition, mjml) {
      const w = wrap('if', mjml);
      conditions.set(w.id, condition);
      return w.text;
    },
    repeat(source, mjml) {
      const w = wrap('each', mjml);
      repeats.set(w.id, source);
      return w.text;
    },
    html: () => htmlBlocks.get(path) ?? '',
  });
  const shown = (raw: unknown, path: string, mjml: string) => {
    if (raw === undefined || raw === null) return mjml;
    const w = wrap('if', mjml);
    conditions.set(w.id, { kind: 'show', rule: parseShowWhen(raw, `${path}.show_when`) });
    return w.text;
  };
  const first = layout.sections[0]?.columns[0]?.[0];
  const preheader = first?.type === 'preheader' ? String(first.text ?? '').slice(0, 500) : null;
  const sections = layout.sections.map((section, s) => {
    const path = `layout.sections[${s}]`;
    const width = `${Math.floor(100 / section.columns.length)}%`;
    const columns = section.columns.map((column, c) => `<mj-column width="${width}">${column.map((block, b) => {
      const at = `${path}.columns[${c}][${b}]`;
      return shown(block.show_when, at, blockMjml(block, at, writer(at)));
    }).join('')}</mj-column>`).join('');
    let mjml = `<mj-section background-color="${colour(section.background_color, '#ffffff')}" padding="12px 0">${columns}</mj-section>`;
    if (section.repeat) {
      const w = wrap('each', mjml);
      repeats.set(w.id, section.repeat.split('.'));
      mjml = w.text;
    }
    return shown(section.show_when, path, mjml);
  });
  const head = `<mj-head><mj-attributes><mj-all font-family="{{brand.font}}" /></mj-attributes>${preheader ? `<mj-preview>${escapeHtml(preheader)}</mj-preview>` : ''}</mj-head>`;
  const mjml = `<mjml>${head}<mj-body background-color="${colour(layout.background_color, '#f4f4f5')}" width="600px">${sections.join('')}</mj-body></mjml>`;
  return { mjml, markers: { conditions, repeats }, preheader };
}

/** Markers only (a send reading a stored version): the html blocks' content does not change them. */
export const layoutMarkers = (layout: Layout): Markers => layoutMjml(layout, new Map()).markers;

/** Sanitises the html blocks, compiles the MJML and makes the text part. */
export async function compileLayout(layout: Layout): Promise<CompiledLayout> {
  const htmlBlocks = new Map<string, string>();
  for (const [s, section] of layout.sections.entries()) {
    for (const [c, column] of section.columns.entries()) {
      for (const [b, block] of column.entries()) {
        if (block.type !== 'html' || typeof block.html !== 'string') continue;
        // Comments go too: the markers are comments, and an author's may not pose as one.
        htmlBlocks.set(`layout.sections[${s}].columns[${c}][${b}]`, (await sanitizeHtmlBlock(block.html)).replace(/<!--[\s\S]*?-->/g, ''));
      }
    }
  }
  const { mjml, markers, preheader } = layoutMjml(layout, htmlBlocks);
  // Loaded on the first layout compiled: MJML and what it pulls in (juice, cheerio, …) add ~90 MiB
  // of resident code to a process, and most processes (the jobs role importing contacts, the
  // outbound role) never compile one.
  const { default: mjml2html } = await import('mjml');
  const { html } = await mjml2html(mjml, { validationLevel: 'skip', keepComments: true });
  return { html, text: textOf(html), preheader, markers };
}

const toText = textCompiler({
  wordwrap: false,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    { selector: 'h1', options: { uppercase: false } },
    { selector: 'h2', options: { uppercase: false } },
    { selector: 'h3', options: { uppercase: false } },
  ],
});

/** The text part: the HTML's text (the hidden preview left out), markers kept as markers. */
function textOf(html: string): string {
  const body = html
    // An author's text that looks like a marker stays text: only svc's own comments become markers.
    .replace(/&lt;!--svc:/g, '&lt;!-- svc:')
    .replace(/<div style="display:none;font-size:1px;[^"]*">[\s\S]*?<\/div>/, '')
    .replace(/<!--svc:(if|each|end):(\d+)-->/g, (_, kind: string, id: string) => `<p>\u0001${kind}:${id}\u0001</p>`);
  return toText(body).replace(/\n*\u0001(if|each|end):(\d+)\u0001\n*/g, (_, kind: string, id: string) => `\n<!--svc:${kind}:${id}-->`).trim();
}
