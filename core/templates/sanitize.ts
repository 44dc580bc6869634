import createDOMPurify, { type Config, type DOMPurify } from 'dompurify';

// The `html` block of a visual template is the author's own markup, made inert before it is
// compiled: scripts, event handlers, style sheets, `javascript:` (and other code-running) links,
// frames and embeds are removed. DOMPurify runs on jsdom, loaded once at the first html block, as
// core/team/svg.ts does it (the module is named through a variable so the DOM's types stay out).

const config: Config = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    'script', 'style', 'link', 'meta', 'base', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'form', 'input',
    'button', 'textarea', 'select', 'option', 'audio', 'video', 'source', 'track', 'svg', 'math', 'template', 'noscript',
  ],
  FORBID_ATTR: ['srcset', 'srcdoc', 'formaction', 'action', 'background', 'ping'],
  // http(s), mail and phone links, in-page anchors and svc's placeholders; nothing else runs or loads.
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|tel:|#|\{\{)/i,
  ALLOW_DATA_ATTR: false,
};

const jsdomModule: string = 'jsdom';
let sanitiser: Promise<DOMPurify> | undefined;
const loadSanitiser = () => (sanitiser ??= import(jsdomModule).then(({ JSDOM }: { JSDOM: new (html: string) => { window: unknown } }) =>
  createDOMPurify(new JSDOM('').window as Parameters<typeof createDOMPurify>[0])));

/** The markup with everything that could run, load a style sheet or embed something removed. */
export async function sanitizeHtmlBlock(html: string): Promise<string> {
  const purify = await loadSanitiser();
  // Style attributes stay (mail clients need inline styles) but may not load or run anything.
  const clean = purify.sanitize(html, config) as unknown as string;
  return clean.replace(/\sstyle="[^"]*(?:url\s*\(|expression\s*\(|@import|javascript:)[^"]*"/gi, '');
}
