import { compile as textCompiler } from 'html-to-text';
import type { CompiledVersion, RenderedContent } from './compiled.js';
import { walkNodes } from './placeholders.js';

// Pre-send checks over a version as previewed (the broadcasts' content checks, applied to a
// template): each is pass, warn or fail, nothing is gated, and links are read, never visited.

export type CheckStatus = 'pass' | 'warn' | 'fail';
export interface CheckResult {
  name: 'links' | 'link_types' | 'variables' | 'subject' | 'preview_text' | 'alt_text' | 'image_weight' | 'text_and_images' | 'unsubscribe';
  status: CheckStatus;
  message: string;
}

export const SUBJECT_WARN_CHARS = 60;
export const PREVIEW_WARN_CHARS = 150;
export const IMAGE_WEIGHT_WARN_BYTES = 1024 * 1024;
/** Fewer visible characters than this per image reads as "mostly pictures". */
const TEXT_PER_IMAGE_MIN = 100;

export interface ChecksInput {
  version: CompiledVersion;
  content: RenderedContent;
  missing: string[];
  /** Bytes of the team's uploaded images among these upload ids. */
  imageBytes(uploadIds: readonly string[]): Promise<number>;
}

const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  return m ? (m[1] ?? m[2] ?? m[3] ?? '') : undefined;
};
const decode = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
const visibleText = textCompiler({ wordwrap: false, selectors: [{ selector: 'img', format: 'skip' }, { selector: 'a', options: { ignoreHref: true } }] });

export async function runChecks(input: ChecksInput): Promise<CheckResult[]> {
  const { html } = input.content;
  const links = [...html.matchAll(/<a\b[^>]*>/gi)].map((m) => decode(attr(m[0], 'href') ?? '').trim());
  const images = [...html.matchAll(/<img\b[^>]*>/gi)].map((m) => ({ src: decode(attr(m[0], 'src') ?? ''), alt: attr(m[0], 'alt') }));
  return [
    linksCheck(links),
    linkTypesCheck(links),
    variablesCheck(input.missing),
    subjectCheck(input.content.subject),
    previewCheck(input.version.previewText),
    altCheck(images),
    await weightCheck(images, input.imageBytes),
    textCheck(html, images.length),
    unsubscribeCheck(input.version, html, links),
  ];
}

const codeRunning = /^(javascript|vbscript|data|file):/i;

function linksCheck(links: string[]): CheckResult {
  const bad = links.filter((l) => !codeRunning.test(l) && (l === '' || l === '#' || !/^(https?:\/\/[^/\s]+|mailto:[^\s]+|tel:[^\s]+)/i.test(l)));
  return bad.length
    ? { name: 'links', status: 'fail', message: `${bad.length} link(s) are empty, \`#\` or not a full web address: ${bad.slice(0, 5).map((l) => JSON.stringify(l)).join(', ')}.` }
    : { name: 'links', status: 'pass', message: `${links.length} link(s), each a full address.` };
}

function linkTypesCheck(links: string[]): CheckResult {
  const running = links.filter((l) => codeRunning.test(l));
  if (running.length) return { name: 'link_types', status: 'fail', message: `${running.length} link(s) would run code or embed data (${running.slice(0, 3).map((l) => l.split(':')[0]).join(', ')}).` };
  const plain = links.filter((l) => /^http:/i.test(l));
  return plain.length
    ? { name: 'link_types', status: 'warn', message: `${plain.length} link(s) use http rather than https.` }
    : { name: 'link_types', status: 'pass', message: 'No link runs code; every web link is https.' };
}

function variablesCheck(missing: string[]): CheckResult {
  return missing.length
    ? { name: 'variables', status: 'fail', message: `No value or fallback for ${missing.map((k) => `\`${k}\``).join(', ')}.` }
    : { name: 'variables', status: 'pass', message: 'Every variable has a value or a fallback.' };
}

function subjectCheck(subject: string | null): CheckResult {
  if (!subject || subject.trim() === '') return { name: 'subject', status: 'fail', message: 'The template has no subject (a send must then give one).' };
  const length = [...subject].length;
  return length > SUBJECT_WARN_CHARS
    ? { name: 'subject', status: 'warn', message: `The subject is ${length} characters; past ${SUBJECT_WARN_CHARS} it is often cut off.` }
    : { name: 'subject', status: 'pass', message: `The subject is ${length} characters.` };
}

function previewCheck(preview: string | null): CheckResult {
  if (!preview || preview.trim() === '') return { name: 'preview_text', status: 'warn', message: 'No preview text: inboxes show the first words of the body instead.' };
  const length = [...preview].length;
  return length > PREVIEW_WARN_CHARS
    ? { name: 'preview_text', status: 'warn', message: `The preview text is ${length} characters; past ${PREVIEW_WARN_CHARS} it is cut off.` }
    : { name: 'preview_text', status: 'pass', message: `The preview text is ${length} characters.` };
}

function altCheck(images: { alt: string | undefined }[]): CheckResult {
  const without = images.filter((i) => !i.alt || i.alt.trim() === '').length;
  return without
    ? { name: 'alt_text', status: 'warn', message: `${without} of ${images.length} image(s) have no alt text.` }
    : { name: 'alt_text', status: 'pass', message: `Every image (${images.length}) has alt text.` };
}

async function weightCheck(images: { src: string }[], bytesOf: ChecksInput['imageBytes']): Promise<CheckResult> {
  const ids = [...new Set(images.map((i) => /\/brand-kit\/([0-9a-f-]{36})\.[a-z]+$/i.exec(i.src)?.[1]?.toLowerCase()).filter((id): id is string => !!id))];
  const bytes = await bytesOf(ids);
  const mb = (bytes / 1024 / 1024).toFixed(2);
  return bytes > IMAGE_WEIGHT_WARN_BYTES
    ? { name: 'image_weight', status: 'warn', message: `Uploaded images weigh ${mb} MB; past 1 MB mail loads slowly.` }
    : { name: 'image_weight', status: 'pass', message: `Uploaded images weigh ${mb} MB.` };
}

function textCheck(html: string, images: number): CheckResult {
  const chars = visibleText(html.replace(/<div style="display:none;[^"]*">[\s\S]*?<\/div>/, '')).replace(/\s+/g, ' ').trim().length;
  return images > 0 && chars < images * TEXT_PER_IMAGE_MIN
    ? { name: 'text_and_images', status: 'warn', message: `Mostly pictures: ${chars} characters of text beside ${images} image(s).` }
    : { name: 'text_and_images', status: 'pass', message: `${chars} characters of text beside ${images} image(s).` };
}

/** A link of its own: one that says unsubscribe, or the contact's unsubscribe link a campaign fills in. */
function unsubscribeCheck(version: CompiledVersion, html: string, links: string[]): CheckResult {
  let slot = false;
  walkNodes(version.html.nodes, (n) => { if (n.k === 'data' && n.scope === 'contact' && n.path[0] === 'unsubscribe_url') slot = true; });
  const own = slot || links.some((l) => /unsubscribe/i.test(l)) || /<a\b[^>]*>[^<]*unsubscribe/i.test(html);
  return own
    ? { name: 'unsubscribe', status: 'pass', message: 'The body has an unsubscribe link.' }
    : { name: 'unsubscribe', status: 'warn', message: 'The body has no unsubscribe link of its own.' };
}
