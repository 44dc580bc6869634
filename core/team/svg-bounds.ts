// How many elements an SVG's text holds and how deep they nest, counted before any parser sees it:
// jsdom's XML parser takes time that grows with the square of the nesting (1,000 levels: 0.3 s;
// 4,600, what 32 KB allows: seconds, then a stack overflow) and the sanitiser time with the
// elements, all on the event loop. A resource bound, not the judge of what is safe: it only
// finds where tags begin and end (skipping quoted attribute values, comments, CDATA and
// processing instructions), and a malformed file may count high, never low.

export const maxSvgElements = 1000;
export const maxSvgDepth = 64;

export interface MarkupShape {
  elements: number;
  /** The deepest nesting seen at any point (stray end tags later do not lower it). */
  depth: number;
}

export function markupShape(text: string): MarkupShape {
  let elements = 0;
  let depth = 0;
  let deepest = 0;
  for (let i = text.indexOf('<'); i !== -1; i = text.indexOf('<', i)) {
    if (text.startsWith('<!--', i)) i = skipPast(text, i + 4, '-->');
    else if (text.startsWith('<![CDATA[', i)) i = skipPast(text, i + 9, ']]>');
    else if (text.startsWith('<?', i)) i = skipPast(text, i + 2, '?>');
    else if (text.startsWith('</', i)) {
      depth = Math.max(0, depth - 1);
      i = tagEnd(text, i + 2);
    } else {
      const end = tagEnd(text, i + 1);
      elements++;
      if (text[end - 2] !== '/') deepest = Math.max(deepest, ++depth);
      i = end;
    }
  }
  return { elements, depth: deepest };
}

/** The index just past the `>` that ends a tag begun before `from`, quoted values skipped. */
function tagEnd(text: string, from: number): number {
  let quote = '';
  for (let j = from; j < text.length; j++) {
    const c = text[j];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return j + 1;
  }
  return text.length;
}

function skipPast(text: string, from: number, marker: string): number {
  const at = text.indexOf(marker, from);
  return at === -1 ? text.length : at + marker.length;
}
