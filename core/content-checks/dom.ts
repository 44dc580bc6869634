// The few DOM shapes the content checks read of jsdom's parse, named here so the DOM's globals
// stay out of svc's types (as core/team/svg-dom.ts does). jsdom loads once per process, lazily.

export interface DomElement {
  localName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
}

export interface HtmlDocument {
  body: DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}

interface DomWindow {
  DOMParser: new () => { parseFromString(text: string, type: 'text/html'): HtmlDocument };
}

const jsdomModule: string = 'jsdom';
let parser: Promise<{ parseFromString(text: string, type: 'text/html'): HtmlDocument }> | undefined;

/** Parses HTML as a browser would (jsdom's HTML parser, no scripts run, nothing fetched). */
export async function parseHtml(html: string): Promise<HtmlDocument> {
  parser ??= import(jsdomModule).then(({ JSDOM }: { JSDOM: new (html: string) => { window: DomWindow } }) => new new JSDOM('').window.DOMParser());
  return (await parser).parseFromString(html, 'text/html');
}
