// Rendered HTML read back with a real HTML parser (jsdom) in tests. The module is named through a
// variable, as core/team/svg.ts does it: its type declarations would bring the browser's globals
// into every file of the build. These few shapes are what the tests use.

export interface TestElement {
  textContent: string | null;
  getAttribute(name: string): string | null;
  tagName: string;
}

export interface TestDocument {
  getElementById(id: string): TestElement | null;
  querySelectorAll(selector: string): ArrayLike<TestElement> & Iterable<TestElement>;
  body: TestElement;
}

const jsdomModule: string = 'jsdom';

export async function parseHtml(html: string): Promise<TestDocument> {
  const { JSDOM } = await import(jsdomModule) as { JSDOM: new (html: string) => { window: { document: TestDocument } } };
  return new JSDOM(html).window.document;
}
