import createDOMPurify, { type Config, type DOMPurify } from 'dompurify';
import { validationError } from '../errors.js';
import { markupShape, maxSvgDepth, maxSvgElements } from './svg-bounds.js';
import type { DomElement, DomNode, DomWindow, Removal } from './svg-dom.js';

// An uploaded SVG logo must be inert: no script, links, animation or external references. The
// file is parsed as XML (what a browser does with image/svg+xml) and that very tree is handed to
// DOMPurify's SVG profile. What the sanitiser removes is judged: a comment, an editor's metadata
// in its own namespace or an unknown presentation attribute may go quietly, but a removal that
// matters (scripts, event handlers, links, animation, embedded HTML, external references) refuses
// the file, rather than storing a drawing other than the one sent. What DOMPurify lets through
// by design is then checked on the kept tree: every href must be a #fragment of the file (an
// <image> may also hold a data: raster image), and styles may not import, load or animate. The
// stored file is the sanitiser's output, serialised as XML: what is served is what was checked.

const ns = {
  svg: 'http://www.w3.org/2000/svg',
  xhtml: 'http://www.w3.org/1999/xhtml',
  mathml: 'http://www.w3.org/1998/Math/MathML',
  xlink: 'http://www.w3.org/1999/xlink',
  xml: 'http://www.w3.org/XML/1998/namespace',
  xmlns: 'http://www.w3.org/2000/xmlns/',
};

const config: Config = {
  USE_PROFILES: { svg: true, svgFilters: true },
  // <use> is refused by DOMPurify for its external form; a local one is common in exported
  // logos, and its href is held to a #fragment below like every other.
  ADD_TAGS: ['use'],
  // The profile keeps these three; a logo does not move.
  FORBID_TAGS: ['animatemotion', 'animatetransform', 'animatecolor'],
  RETURN_DOM: true,
};

const refuse = (message: string) => validationError(422, 'content', message);
export const notAnImage = 'The file is not a PNG, JPEG or SVG image (the type is read from its bytes).';

// One parser and sanitiser per process, made at the first SVG: jsdom takes a while to load, and
// processes that never see an upload (outbound, inbound) never load it.
// The module is named through a variable: its type declarations would bring the browser's
// globals into every file of svc (core/team/svg-dom.ts names the little this file uses).
const jsdomModule: string = 'jsdom';
let sanitiser: Promise<{ window: DomWindow; purify: DOMPurify }> | undefined;
const loadSanitiser = () => (sanitiser ??= import(jsdomModule).then(({ JSDOM }: { JSDOM: new (html: string) => { window: DomWindow } }) => {
  const { window } = new JSDOM('');
  return { window, purify: createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]) };
}));

/** The SVG's bytes to store (the sanitiser's output), or a 422 naming what it may not hold. */
export async function checkSvg(bytes: Buffer): Promise<Buffer> {
  const text = utf8(bytes);
  // Refused before parsing: the parser expands a DTD's entities (a few bytes can grow without bound).
  if (/<!DOCTYPE/i.test(text)) {
    throw refuse(/<!DOCTYPE\s+svg\b/i.test(text) ? 'An SVG may not carry a DOCTYPE: its entities and external DTDs are references.' : notAnImage);
  }
  const shape = markupShape(text);
  if (shape.elements > maxSvgElements) throw refuse(`An SVG may hold at most ${maxSvgElements} elements; this one holds ${shape.elements}.`);
  if (shape.depth > maxSvgDepth) throw refuse(`An SVG's elements may nest at most ${maxSvgDepth} deep; this one nests ${shape.depth}.`);
  const { window, purify } = await loadSanitiser();
  const doc = new window.DOMParser().parseFromString(text, 'image/svg+xml');
  const root = doc.documentElement;
  if (root.localName === 'parsererror') throw refuse(`The file is not well-formed SVG: ${root.textContent?.split('\n')[0]}`);
  if (root.localName === 'svg' && root.namespaceURI !== ns.svg) throw refuse(`An SVG's root element must be <svg xmlns="${ns.svg}">.`);
  if (root.namespaceURI !== ns.svg || root.localName !== 'svg') throw refuse(notAnImage);
  for (const node of Array.from(doc.childNodes)) {
    if (node.nodeType === nodeTypes.processingInstruction) throw refuse(`The SVG holds <?${node.nodeName}?>: processing instructions can load external style sheets.`);
  }
  // DOMPurify drops CDATA sections; as text they mean the same (drawing tools often wrap styles in one).
  for (const cdata of cdataSections(root)) cdata.replaceWith(doc.createTextNode(cdata.textContent ?? ''));
  const body = purify.sanitize(root as never, config) as unknown as DomElement;
  const removed = purify.removed as unknown as Removal[];
  const matters = [...new Set(removed.map((entry) => removal(entry, body)).filter((why): why is string => why !== undefined))];
  const svg = body.firstElementChild;
  if (!svg || svg.localName !== 'svg') throw refuse('The SVG holds nothing an inert logo may keep.');
  matters.push(...keptProblems(svg));
  if (matters.length) throw refuse(`The SVG holds what an inert logo may not: ${matters.slice(0, 5).join('; ')}. Remove it and upload again.`);
  return Buffer.from(new window.XMLSerializer().serializeToString(svg), 'utf8');
}

function utf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw refuse('An SVG must be UTF-8 text.');
  }
}

const nodeTypes = { element: 1, cdata: 4, processingInstruction: 7, comment: 8 };
const showCdataSections = 0x8;

function cdataSections(root: DomElement): DomNode[] {
  const walker = root.ownerDocument.createTreeWalker(root, showCdataSections);
  const found: DomNode[] = [];
  while (walker.nextNode()) found.push(walker.currentNode);
  return found;
}

const animation = new Set(['animate', 'animatemotion', 'animatetransform', 'animatecolor', 'set', 'discard']);
const scripting = new Set(['script', 'handler', 'listener']);
const references = new Set(['a', 'image', 'feimage', 'use', 'cursor', 'font-face', 'font-face-src', 'font-face-uri', 'color-profile', 'tref', 'iframe']);

/** Why a removal by the sanitiser matters, or undefined when the drawing loses nothing that counts. */
function removal(entry: Removal, wrapper: DomElement): string | undefined {
  if ('element' in entry) return removedElement(entry.element, wrapper);
  const attr = entry.attribute;
  if (!attr) return undefined;
  const on = `<${entry.from.localName}>`;
  const name = attr.localName.toLowerCase();
  if (attr.namespaceURI === ns.xmlns) return undefined;
  if (attr.namespaceURI === ns.xlink || name === 'href' || name === 'src') return `a link or reference (${attr.name}="${clip(attr.value)}" on ${on})`;
  if (attr.namespaceURI === ns.xml) return name === 'base' ? `xml:base on ${on} (it re-points every link)` : undefined;
  // Another vocabulary's attribute (a drawing tool's own prefix): metadata.
  if (attr.namespaceURI !== null) return undefined;
  if (name.startsWith('on')) return `an event handler (${attr.name}= on ${on})`;
  if (name === 'style' || /url\s*\(|@import|^\s*[a-z][a-z0-9+.-]*:/i.test(attr.value)) return `${attr.name}="${clip(attr.value)}" on ${on}`;
  return undefined;
}

function removedElement(node: DomNode, wrapper: DomElement): string | undefined {
  if (node === wrapper) return undefined; // DOMPurify's own <body>, which it hands back
  if (node.nodeType === nodeTypes.comment) return undefined;
  if (node.nodeType === nodeTypes.processingInstruction) return `<?${node.nodeName}?> (processing instructions can load external style sheets)`;
  if (node.nodeType !== nodeTypes.element) return undefined;
  const element = node as DomElement;
  const name = element.localName.toLowerCase();
  const space = element.namespaceURI;
  if (space === ns.xhtml || space === ns.mathml || name === 'foreignobject') return `embedded HTML or MathML (<${element.nodeName}>)`;
  // Another vocabulary's element (RDF, a drawing tool's private data): metadata.
  if (space !== ns.svg) return undefined;
  if (scripting.has(name)) return `a script (<${element.localName}>)`;
  if (animation.has(name)) return `animation (<${element.localName}>)`;
  if (references.has(name)) return `a link or reference (<${element.localName}>)`;
  return `<${element.localName}>, which an inert logo may not hold`;
}

/** What the sanitiser keeps by design but a logo may not: links out, loading or animating styles. */
function keptProblems(svg: DomElement): string[] {
  const problems: string[] = [];
  for (const element of [svg, ...Array.from(svg.getElementsByTagName('*'))]) {
    const on = `<${element.localName}>`;
    for (const attr of Array.from(element.attributes)) {
      const isHref = attr.localName === 'href' && (attr.namespaceURI === null || attr.namespaceURI === ns.xlink);
      if (isHref && !localReference(element, attr.value)) problems.push(`a link or reference (${attr.name}="${clip(attr.value)}" on ${on}; only #fragments of the file are allowed)`);
      const css = cssProblem(attr.value, attr.localName === 'style');
      if (css) problems.push(`${css} (${attr.name}= on ${on})`);
    }
    if (element.localName === 'style') {
      const css = cssProblem(element.textContent ?? '', true);
      if (css) problems.push(`${css} (in <style>)`);
    }
  }
  return problems;
}

const rasterDataUrl = /^data:image\/(png|jpeg|gif|webp)[;,]/i;

function localReference(element: DomElement, value: string): boolean {
  const href = value.trim();
  return href.startsWith('#') || (element.localName === 'image' && rasterDataUrl.test(href));
}

const loadingFunctions = new Set(['image', 'image-set', '-webkit-image-set', 'cross-fade', 'element', 'src']);

/** Why a style (or a presentation attribute, which CSS parses too) may load or animate something. */
function cssProblem(text: string, isStyle: boolean): string | undefined {
  if (/@import/i.test(text)) return 'an @import';
  // CSS escapes can spell url( and the rest in ways no pattern sees.
  if (text.includes('\\') && (isStyle || text.includes('('))) return 'a CSS escape';
  if (isStyle && /@keyframes|(^|[\s;{])(-webkit-)?(animation|transition)(-[a-z-]+)?\s*:/i.test(text)) return 'CSS animation';
  for (const match of text.matchAll(/([a-z-]*)\s*\(\s*['"]?\s*([^)'"]*)/gi)) {
    const name = match[1]!.toLowerCase();
    if (name === 'url' && !match[2]!.trim().startsWith('#')) return `an external reference (url(${clip(match[2]!)}))`;
    if (loadingFunctions.has(name)) return `an external reference (${name}())`;
  }
  return undefined;
}

const clip = (value: string) => (value.length > 60 ? `${value.slice(0, 57)}...` : value);
