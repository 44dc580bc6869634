import { BUILT_IN_VARIABLES, hasUnsubscribeVariable, mergeTokens } from './merge.js';
import { parseHtml, type DomElement, type HtmlDocument } from './dom.js';

// The content checks of campaign content (spec Broadcasts, "Content checks"; the same list as
// POST /templates/{id}/checks): each answers pass, warn or fail. Nothing here knows broadcasts:
// callers hand the content and the variables their audience has. Links are never visited; HTML is
// read with a real parser (jsdom), never with patterns.

export type CheckStatus = 'pass' | 'warn' | 'fail';
export type CheckName =
  | 'variables' | 'links' | 'link_types' | 'subject' | 'preview_text' | 'alt_text' | 'image_weight' | 'text_and_images' | 'unsubscribe';

export interface ContentCheck {
  name: CheckName;
  status: CheckStatus;
  message: string;
  /** What the check found wrong (variables, link targets, image sources), when anything. */
  items?: string[];
}

export interface ContentInput {
  subject: string | null | undefined;
  preview_text: string | null | undefined;
  html: string | null | undefined;
  text: string | null | undefined;
  /** Variables with a value for the audience beyond the built-ins: the team's property keys. */
  variables: readonly string[];
  /** Size in bytes of an image svc hosts (brand kit uploads), by its src; undefined when not one. */
  imageBytes?: (src: string) => number | undefined;
}

export const SUBJECT_WARN_CHARS = 60;
export const PREVIEW_WARN_CHARS = 150;
export const IMAGE_WEIGHT_WARN_BYTES = 1024 * 1024;
/** Below this many words of text per image, the body is "mostly pictures". */
const WORDS_PER_IMAGE = 25;

const codeSchemes = new Set(['javascript:', 'vbscript:', 'data:']);
const mergeOnly = /^\s*\{\{\{[^}]*\}\}\}\s*$/;

/** Runs every check; the list is always complete and in this order. */
export async function runContentChecks(input: ContentInput): Promise<ContentCheck[]> {
  const doc = input.html ? await parseHtml(input.html) : undefined;
  const anchors = doc ? Array.from(doc.querySelectorAll('a[href], area[href]')) : [];
  const images = doc ? Array.from(doc.querySelectorAll('img')) : [];
  return [
    variablesCheck(input),
    linksCheck(anchors),
    linkTypesCheck(anchors),
    subjectCheck(input.subject),
    previewCheck(input.preview_text),
    altTextCheck(images),
    imageWeightCheck(images, input.imageBytes),
    textAndImagesCheck(doc, images),
    unsubscribeCheck(input),
  ];
}

/** Whether any check failed (a send stops unless acknowledged). */
export const failedChecks = (checks: readonly ContentCheck[]) => checks.filter((c) => c.status === 'fail');

const pass = (name: CheckName, message: string): ContentCheck => ({ name, status: 'pass', message });
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function variablesCheck(input: ContentInput): ContentCheck {
  const known = new Set([...BUILT_IN_VARIABLES, ...input.variables.map((v) => v.toUpperCase())]);
  const unknown = new Set<string>();
  for (const text of [input.subject, input.preview_text, input.html, input.text]) {
    for (const t of mergeTokens(text)) if (t.fallback === undefined && !known.has(t.key)) unknown.add(t.key);
  }
  if (unknown.size === 0) return pass('variables', 'Every merge variable has a field, a property or a default.');
  return { name: 'variables', status: 'fail', message: `${plural(unknown.size, 'variable')} with no field, property or default.`, items: [...unknown] };
}

const hrefOf = (a: DomElement) => (a.getAttribute('href') ?? '').trim();

function linksCheck(anchors: DomElement[]): ContentCheck {
  const bad = anchors.map(hrefOf).filter((href) => {
    if (mergeOnly.test(href)) return false;
    if (href === '' || href === '#') return true;
    const scheme = schemeOf(href);
    if (scheme === 'mailto:' || scheme === 'tel:' || (scheme !== undefined && codeSchemes.has(scheme))) return false;
    return !isWebAddress(href);
  });
  if (bad.length === 0) return pass('links', anchors.length ? `${plural(anchors.length, 'link')}, each a full web address.` : 'No links.');
  return { name: 'links', status: 'fail', message: `${plural(bad.length, 'link')} empty, \`#\` or not a full web address.`, items: bad };
}

function linkTypesCheck(anchors: DomElement[]): ContentCheck {
  const hrefs = anchors.map(hrefOf);
  const code = hrefs.filter((h) => codeSchemes.has(schemeOf(h) ?? ''));
  if (code.length) return { name: 'link_types', status: 'fail', message: `${plural(code.length, 'link')} would run code.`, items: code };
  const http = hrefs.filter((h) => schemeOf(h) === 'http:');
  if (http.length) return { name: 'link_types', status: 'warn', message: `${plural(http.length, 'link')} use http rather than https.`, items: http };
  return pass('link_types', 'No link runs code or uses plain http.');
}

function subjectCheck(subject: string | null | undefined): ContentCheck {
  if (!subject || subject.trim() === '') return { name: 'subject', status: 'fail', message: 'There is no subject.' };
  const chars = [...subject].length;
  if (chars > SUBJECT_WARN_CHARS) return { name: 'subject', status: 'warn', message: `The subject has ${chars} characters; past ${SUBJECT_WARN_CHARS} it is often cut short.` };
  return pass('subject', 'The subject is set and short enough.');
}

function previewCheck(preview: string | null | undefined): ContentCheck {
  if (!preview || preview.trim() === '') return { name: 'preview_text', status: 'warn', message: 'There is no preview text.' };
  const chars = [...preview].length;
  if (chars > PREVIEW_WARN_CHARS) return { name: 'preview_text', status: 'warn', message: `The preview text has ${chars} characters; past ${PREVIEW_WARN_CHARS} it is cut short.` };
  return pass('preview_text', 'The preview text is set and short enough.');
}

function altTextCheck(images: DomElement[]): ContentCheck {
  const missing = images.filter((img) => !img.hasAttribute('alt')).map((img) => img.getAttribute('src') ?? '');
  if (missing.length) return { name: 'alt_text', status: 'warn', message: `${plural(missing.length, 'image')} without alt text.`, items: missing };
  return pass('alt_text', images.length ? 'Every image has alt text.' : 'No images.');
}

function imageWeightCheck(images: DomElement[], hosted: ContentInput['imageBytes']): ContentCheck {
  let bytes = 0;
  for (const img of images) {
    const src = (img.getAttribute('src') ?? '').trim();
    bytes += src.toLowerCase().startsWith('data:') ? dataUriBytes(src) : hosted?.(src) ?? 0;
  }
  if (bytes > IMAGE_WEIGHT_WARN_BYTES) return { name: 'image_weight', status: 'warn', message: `Uploaded images weigh ${bytes} bytes, past 1 MB.` };
  return pass('image_weight', `Uploaded images weigh ${bytes} bytes.`);
}

function textAndImagesCheck(doc: HtmlDocument | undefined, images: DomElement[]): ContentCheck {
  if (images.length === 0) return pass('text_and_images', 'No images.');
  const words = (doc?.body?.textContent ?? '').split(/\s+/).filter(Boolean).length;
  if (words < WORDS_PER_IMAGE * images.length) {
    return { name: 'text_and_images', status: 'warn', message: `Mostly pictures: ${plural(words, 'word')} of text beside ${plural(images.length, 'image')}.` };
  }
  return pass('text_and_images', 'Enough text beside the images.');
}

function unsubscribeCheck(input: ContentInput): ContentCheck {
  if (hasUnsubscribeVariable(input.html, input.text)) return pass('unsubscribe', 'The body has its own unsubscribe or preferences link.');
  return { name: 'unsubscribe', status: 'warn', message: 'The body has no unsubscribe link of its own; a plain footer with one is added.' };
}

function schemeOf(href: string): string | undefined {
  // Browsers ignore tabs and newlines inside a scheme ("java\nscript:"), so they are dropped first.
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(href.replace(/[\t\n\r]/g, ''));
  return match ? `${match[1]!.toLowerCase()}:` : undefined;
}

function isWebAddress(href: string): boolean {
  try {
    const url = new URL(href);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    // A merge variable inside an otherwise full address (https://x.test/?u={{{EMAIL}}}) is fine.
    return /^https?:\/\/[^/\s]+/i.test(href);
  }
}

function dataUriBytes(src: string): number {
  const comma = src.indexOf(',');
  if (comma < 0) return 0;
  const body = src.slice(comma + 1);
  return /;base64$/i.test(src.slice(0, comma)) ? Math.floor((body.replace(/\s/g, '').length * 3) / 4) : body.length;
}
