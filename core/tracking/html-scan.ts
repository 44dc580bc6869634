// A small HTML tokenizer for what tracking rewrites: start tags and their attributes, with the
// states of the HTML standard's tokenizer that decide what is markup at all — comments, CDATA,
// bogus comments (`<!…>`, `<?…>`), end tags, and the raw-text elements (script, style, textarea,
// title…) whose content is never markup. It reports where each attribute's value sits in the
// source so a caller can replace exactly that span and copy everything else byte for byte. It never
// builds a tree: composing a message per recipient must stay cheap.

export interface ScannedAttribute {
  /** Lower-cased name. */
  name: string;
  /** The raw value as written (entities not decoded), '' for a bare attribute. */
  raw: string;
  /** The span to replace (quotes included); start === end for a bare attribute. */
  start: number;
  end: number;
}

export interface ScannedTag {
  /** Lower-cased tag name. */
  name: string;
  attributes: ScannedAttribute[];
  /** Offset of `<` and just after `>`. */
  start: number;
  end: number;
}

/** Elements whose content is text up to their end tag, never markup. */
const rawText = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext']);

const isSpace = (c: string | undefined) => c === ' ' || c === '\n' || c === '\t' || c === '\f' || c === '\r';
const isAlpha = (c: string | undefined) => c !== undefined && /[A-Za-z]/.test(c);

/**
 * Calls `onTag` for each start tag and `onEndTag` with the offset of each end tag's `<`, in order.
 * Text inside comments and raw-text elements is skipped.
 */
export function scanHtml(html: string, onTag: (tag: ScannedTag) => void, onEndTag?: (name: string, start: number) => void): void {
  let i = 0;
  const n = html.length;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) return;
    const next = html[lt + 1];
    if (html.startsWith('<!--', lt)) {
      // `<!-->` and `<!--->` close at once (abrupt closing of an empty comment).
      const close = html.startsWith('<!-->', lt) ? lt + 5 : html.startsWith('<!--->', lt) ? lt + 6 : endOf(html, '-->', lt + 4);
      i = close;
    } else if (html.startsWith('<![CDATA[', lt)) {
      i = endOf(html, ']]>', lt + 9);
    } else if (next === '!' || next === '?') {
      i = endOf(html, '>', lt + 2);
    } else if (next === '/' && isAlpha(html[lt + 2])) {
      const tag = readTag(html, lt + 2, lt);
      onEndTag?.(tag.name, lt);
      i = tag.end;
    } else if (next === '/') {
      i = endOf(html, '>', lt + 2);
    } else if (isAlpha(next)) {
      const tag = readTag(html, lt + 1, lt);
      onTag(tag);
      i = tag.end;
      if (rawText.has(tag.name)) i = tag.name === 'plaintext' ? n : skipRawText(html, tag.name, i);
    } else {
      i = lt + 1;
    }
  }
}

/** Just after `marker` searched from `from`, or the end of the text when it never comes. */
function endOf(html: string, marker: string, from: number): number {
  const at = html.indexOf(marker, from);
  return at < 0 ? html.length : at + marker.length;
}

/** Offset of the end tag `</name` (any case, followed by space, `/` or `>`) closing a raw-text element. */
function skipRawText(html: string, name: string, from: number): number {
  const lower = html.toLowerCase();
  let at = from;
  for (;;) {
    at = lower.indexOf(`</${name}`, at);
    if (at < 0) return html.length;
    const after = html[at + 2 + name.length];
    if (after === undefined || after === '>' || after === '/' || isSpace(after)) return at;
    at += 2;
  }
}

/** A tag from its name's first character: name, attributes (first of each name wins), end. */
function readTag(html: string, from: number, start: number): ScannedTag {
  const n = html.length;
  let i = from;
  while (i < n && !isSpace(html[i]) && html[i] !== '/' && html[i] !== '>') i++;
  const tag: ScannedTag = { name: html.slice(from, i).toLowerCase(), attributes: [], start, end: n };
  const seen = new Set<string>();
  while (i < n) {
    while (i < n && (isSpace(html[i]) || html[i] === '/')) i++;
    if (i >= n) break;
    if (html[i] === '>') { tag.end = i + 1; return tag; }
    // The attribute's name: a leading `=` belongs to it (the standard's tokenizer says so).
    const nameStart = i;
    i++;
    while (i < n && !isSpace(html[i]) && html[i] !== '/' && html[i] !== '>' && html[i] !== '=') i++;
    const name = html.slice(nameStart, i).toLowerCase();
    let j = i;
    while (j < n && isSpace(html[j])) j++;
    let attribute: ScannedAttribute = { name, raw: '', start: i, end: i };
    if (html[j] === '=') {
      j++;
      while (j < n && isSpace(html[j])) j++;
      const quote = html[j];
      if (quote === '"' || quote === "'") {
        const close = html.indexOf(quote, j + 1);
        const end = close < 0 ? n : close + 1;
        attribute = { name, raw: html.slice(j + 1, close < 0 ? n : close), start: j, end };
        i = end;
      } else {
        let k = j;
        while (k < n && !isSpace(html[k]) && html[k] !== '>') k++;
        attribute = { name, raw: html.slice(j, k), start: j, end: k };
        i = k;
      }
    }
    if (!seen.has(name)) {
      seen.add(name);
      tag.attributes.push(attribute);
    }
  }
  return tag;
}

const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', sol: '/', colon: ':', equals: '=', quest: '?', num: '#', percnt: '%', period: '.', lowbar: '_', tilde: '~', plus: '+', commat: '@' };

/**
 * An attribute value with its character references decoded, or undefined when it holds one this
 * decoder does not know (the caller then leaves the attribute alone rather than guess).
 */
export function decodeAttribute(raw: string): string | undefined {
  if (!raw.includes('&')) return raw;
  let unknown = false;
  const out = raw.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*)(;?)/g, (whole: string, ref: string, semi: string, at: number) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) { unknown = true; return whole; }
      return String.fromCodePoint(code);
    }
    const value = Object.hasOwn(named, ref) ? named[ref] : undefined;
    if (!semi) {
      // Without its `;` a reference followed by `=` stays literal; otherwise the standard's legacy
      // rule decodes some names and not others: not guessed at.
      if (raw[at + whole.length] !== '=') unknown = true;
      return whole;
    }
    if (value === undefined) { unknown = true; return whole; }
    return value;
  });
  return unknown ? undefined : out;
}
