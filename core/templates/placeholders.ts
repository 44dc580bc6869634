import { ServiceError, validationError } from '../errors.js';
import { compileFormat, type Formatter } from './formats.js';

// A template's text (html, text, subject, preview text) read once into a program of literal
// pieces and slots, so that rendering a recipient is a walk that joins strings: no regular
// expression runs per recipient. Slots are `{{key}}` (a declared variable), `{{brand.key}}` (a
// brand kit token), `{{{event.key|fallback|format}}}`, `{{{item.key…}}}` inside a repeat group and
// `{{{contact.key…}}}`; a broadcast's merge variables (`{{{KEY}}}`, `{{{KEY|default}}}`) pass through
// untouched for the campaign to fill. Conditions and repeat groups of visual templates arrive as markers the
// layout compiler writes (`<!--svc:if:N-->` … `<!--svc:end:N-->`, `<!--svc:each:N-->` …).

export const brandTokens = ['logo_url', 'primary_color', 'accent_color', 'font', 'button_radius', 'company_name', 'address', 'footer_text'] as const;
export type BrandToken = (typeof brandTokens)[number];

export type DataScope = 'event' | 'item' | 'contact';

export type Node =
  | { k: 'lit'; s: string }
  | { k: 'var'; key: string }
  | { k: 'brand'; key: BrandToken }
  | { k: 'data'; scope: DataScope; path: string[]; fallback: string; format: Formatter | null }
  | { k: 'if'; id: number; body: Node[] }
  | { k: 'each'; id: number; body: Node[] };

export interface Program {
  nodes: Node[];
  /** Declared-variable keys the text uses. */
  variables: Set<string>;
}

const keyPattern = /^[A-Za-z0-9_]+$/;
const slot = /<!--svc:(if|each|end):(\d+)-->|\{\{\{([^{}]*)\}\}\}|\{\{\s*([A-Za-z0-9_]+|brand\.[A-Za-z0-9_]+)\s*\}\}/g;
const scopes = new Set<string>(['event', 'item', 'contact']);

/**
 * Reads `source` (at `path`, for error messages) into a program; unreadable slots are 422
 * validation_error. `markers`: the source is svc's own compiled layout (an author's HTML never is).
 */
export function compileText(source: string, path: string, markers: boolean): Program {
  const program: Program = { nodes: [], variables: new Set() };
  const stack: { node: Extract<Node, { k: 'if' | 'each' }>; inEach: boolean }[] = [];
  let out = program.nodes;
  let inEach = false;
  let last = 0;
  for (const m of source.matchAll(slot)) {
    if (m.index > last) out.push({ k: 'lit', s: source.slice(last, m.index) });
    last = m.index + m[0].length;
    if (m[1] !== undefined && !markers) {
      out.push({ k: 'lit', s: m[0] });
    } else if (m[1] !== undefined) {
      if (m[1] === 'end') {
        const open = stack.pop();
        if (!open || open.node.id !== Number(m[2])) throw validationError(422, path, 'The layout\'s groups are not nested properly.');
        inEach = open.inEach;
        out = stack.at(-1)?.node.body ?? program.nodes;
        continue;
      }
      const node: Extract<Node, { k: 'if' | 'each' }> = { k: m[1] as 'if' | 'each', id: Number(m[2]), body: [] };
      out.push(node);
      stack.push({ node, inEach });
      inEach ||= m[1] === 'each';
      out = node.body;
    } else if (m[3] !== undefined && isCampaignMergeVariable(m[3])) {
      // A broadcast's own merge variable (`{{{FIRST_NAME}}}`, `{{{UNSUBSCRIBE_URL|…}}}`, a property
      // key): kept as written, for the campaign to fill per recipient (core/broadcasts/render.ts).
      out.push({ k: 'lit', s: m[0] });
    } else if (m[3] !== undefined) {
      out.push(dataSlot(m[3], path, inEach));
    } else {
      const key = m[4]!;
      if (key.startsWith('brand.')) {
        const token = key.slice('brand.'.length) as BrandToken;
        if (!brandTokens.includes(token)) throw validationError(422, path, `\`{{${key}}}\` is not a brand token; they are ${brandTokens.map((t) => `brand.${t}`).join(', ')}.`);
        out.push({ k: 'brand', key: token });
      } else {
        program.variables.add(key);
        out.push({ k: 'var', key });
      }
    }
  }
  if (stack.length) throw validationError(422, path, 'The layout\'s groups are not nested properly.');
  if (last < source.length) out.push({ k: 'lit', s: source.slice(last) });
  return program;
}

/** `{{{KEY}}}` or `{{{KEY|default}}}` with no `event.`/`item.`/`contact.` scope: a campaign's merge variable. */
const isCampaignMergeVariable = (inner: string): boolean => keyPattern.test(inner.split('|')[0]!.trim()) && inner.split('|').length <= 2;

function dataSlot(inner: string, path: string, inEach: boolean): Node {
  const parts = inner.split('|');
  const name = parts[0]!.trim();
  const segments = name.split('.');
  const scope = segments[0]!;
  if (parts.length > 3 || !scopes.has(scope) || segments.length < 2 || !segments.slice(1).every((s) => keyPattern.test(s))) {
    throw unreadable(path, `\`{{{${inner}}}}\` is not readable: write \`{{{event.key}}}\`, \`{{{item.key}}}\` or \`{{{contact.key}}}\`, then optionally \`|fallback\` and \`|format\`.`);
  }
  if (scope === 'item' && !inEach) throw unreadable(path, `\`{{{${inner}}}}\` is only readable inside a repeat group.`);
  const format = parts[2] === undefined || parts[2].trim() === '' ? null : compileFormat(parts[2].trim(), path);
  return { k: 'data', scope: scope as DataScope, path: segments.slice(1), fallback: parts[1] ?? '', format };
}

const unreadable = (path: string, message: string) => new ServiceError(422, 'validation_error', message, { errors: [{ path, message }] });

/** Every brand token and data slot a program holds, for checks. */
export function walkNodes(nodes: readonly Node[], visit: (node: Node) => void): void {
  for (const node of nodes) {
    visit(node);
    if (node.k === 'if' || node.k === 'each') walkNodes(node.body, visit);
  }
}
