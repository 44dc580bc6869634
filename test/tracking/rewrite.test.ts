import { randomBytes } from 'node:crypto';
import t from 'tap';
import { machineReason, rewriteHtml, trackableUrl, trackingTokens, type TrackingPlan } from '../../core/tracking/index.js';
import { scanHtml } from '../../core/tracking/html-scan.js';

// The pieces of tracking that need no appliance: tokens (forged, altered, cut, wrong kind), the
// HTML rewrite against hostile markup, and the machine-hit rules.
const key = randomBytes(32);
const tokens = trackingTokens(key);
const emailId = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const base = 'https://links.example.com';
const plan: TrackingPlan = { emailId, recipientIdx: 3, mintedAt: 1_800_000_000, base, open: true, click: true };

/** The click tokens of a rewritten part, opened. */
const clicks = (html: string) => [...html.matchAll(/https:\/\/links\.example\.com\/t\/c\/([A-Za-z0-9_-]+)/g)].map((m) => tokens.open(m[1]!, 'click'));

t.test('tokens: a genuine one opens to its claim; forged, altered, cut or the other kind do not', async (t) => {
  const click = tokens.mint({ kind: 'click', emailId, recipientIdx: 7, mintedAt: 1_800_000_123, linkIdx: 2, url: 'https://shop.example/a?b=1' });
  t.same(tokens.open(click, 'click'), { kind: 'click', emailId, recipientIdx: 7, mintedAt: 1_800_000_123, linkIdx: 2, url: 'https://shop.example/a?b=1' });
  t.equal(tokens.open(click, 'open'), undefined, 'a click token is not an open token');
  const open = tokens.mint({ kind: 'open', emailId, recipientIdx: 0, mintedAt: 5 });
  t.match(tokens.open(open, 'open'), { kind: 'open', emailId, recipientIdx: 0, mintedAt: 5 });
  t.equal(tokens.open(open, 'click'), undefined);
  t.equal(trackingTokens(randomBytes(32)).open(click, 'click'), undefined, 'another appliance\'s key');
  t.equal(tokens.open(click.slice(0, -1), 'click'), undefined, 'cut by one character');
  t.equal(tokens.open(click.slice(0, 40), 'click'), undefined, 'cut short');
  t.equal(tokens.open(`${click}A`, 'click'), undefined, 'one character more');
  t.equal(tokens.open('', 'click'), undefined);
  t.equal(tokens.open('%2F..', 'click'), undefined);
  // Every single-character change anywhere in the token is refused.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let accepted = 0;
  for (let i = 0; i < click.length; i++) {
    const swapped = alphabet[(alphabet.indexOf(click[i]!) + 1) % alphabet.length];
    if (tokens.open(click.slice(0, i) + swapped + click.slice(i + 1), 'click')) accepted++;
  }
  t.equal(accepted, 0, 'no altered token opens');
  // The URL is bound by the MAC: another URL under the same head and MAC fails.
  const bytes = Buffer.from(click, 'base64url');
  const other = Buffer.concat([bytes.subarray(0, 25), Buffer.from('https://evil.example/a?b=1'), bytes.subarray(bytes.length - 16)]);
  t.equal(tokens.open(other.toString('base64url'), 'click'), undefined, 'a URL swapped in is refused');
});

t.test('rewrite: links through the tracking host, the pixel before </body>, every other byte kept', async (t) => {
  const html = '<html><body><p>Hi <a href="https://shop.example/x?a=1&amp;b=2">shop</a> and <A HREF=https://docs.example/y>docs</A>'
    + ' <area shape="rect" href=\'https://map.example/\'></p></body></html>';
  const out = rewriteHtml(html, plan, tokens);
  const claims = clicks(out);
  t.same(claims.map((c) => c?.url), ['https://shop.example/x?a=1&b=2', 'https://docs.example/y', 'https://map.example/']);
  t.same(claims.map((c) => c?.linkIdx), [0, 1, 2]);
  t.ok(claims.every((c) => c?.recipientIdx === 3 && c.emailId === emailId && c.mintedAt === plan.mintedAt));
  t.match(out, /<img src="https:\/\/links\.example\.com\/t\/o\/[A-Za-z0-9_-]+\.gif" width="1" height="1" alt=""[^>]*\/><\/body><\/html>$/);
  // Remove what was inserted or replaced: the rest is the original.
  const back = out.replace(/"https:\/\/links\.example\.com\/t\/c\/[A-Za-z0-9_-]+"/g, 'X').replace(/<img src="https:\/\/links[^>]+>/, '');
  t.equal(back, html.replace('"https://shop.example/x?a=1&amp;b=2"', 'X').replace('https://docs.example/y', 'X').replace("'https://map.example/'", 'X'));
  t.equal(rewriteHtml('<p>no body tag <a href="https://a.example/">a</a>', { ...plan, click: false }, tokens).startsWith('<p>no body tag <a href="https://a.example/">a</a><img'), true, 'open only: links kept, pixel at the end');
  t.equal(rewriteHtml(html, { ...plan, open: false, click: false }, tokens), html);
});

t.test('rewrite: hostile markup — only real <a href> in markup is rewritten', async (t) => {
  const hostile = [
    '<!-- <a href="https://in-comment.example/">x</a> -->',
    '<script>var s = "<a href=\'https://in-script.example/\'>";</script>',
    '<style>a[href="https://in-style.example/"]{}</style>',
    '<textarea><a href="https://in-textarea.example/"></textarea>',
    '<![CDATA[<a href="https://in-cdata.example/">]]>',
    '<!doctype html><? <a href="https://in-pi.example/"> ?>',
    '<title><a href="https://in-title.example/"></title>',
    '<a title=">" href="https://after-quoted-gt.example/">1</a>',
    '<a data-href="https://not-href.example/" href="https://real.example/">2</a>',
    '<a href="https://first.example/" href="https://second.example/">3</a>',
    '<a href = "https://spaced.example/" >4</a>',
    '<a\nhref\n=\n"https://newlines.example/">5</a>',
    '<abbr href="https://abbr.example/">6</abbr>',
    '<a href="javascript:alert(1)">7</a><a href="mailto:a@b.example">8</a><a href="#top">9</a><a href="/relative">10</a>',
    '<a href="  https://trimmed.example/  ">11</a>',
    '<a href="https://unknown-entity.example/?a=1&copy;">12</a>',
    '<a href="https://shop.example/unsubscribe?u=1">13</a>',
    '<a href="https://svc.example/unsubscribe/v1.abc.def">14</a><a href="https://svc.example/preferences/tok_1">15</a>',
    '<a data-svc-notrack href="https://opted-out.example/">16</a>',
    '<a href="https://user:pw@creds.example/">17</a>',
    '<a href=https://unquoted.example/?q=1>18</a>',
    '<SCRIPT>document.write("</scriptx><a href=\'https://still-script.example/\'>")</SCRIPT>',
    '<a href="https://after-script.example/">19</a>',
    '<a href="https://list-unsub.example/u/1">20</a>',
    '<a href="', // unterminated at the end
  ].join('\n');
  const out = rewriteHtml(hostile, { ...plan, open: false, keep: ['https://list-unsub.example/u/1'] }, tokens);
  t.same(clicks(out).map((c) => c?.url), [
    'https://after-quoted-gt.example/', 'https://real.example/', 'https://first.example/', 'https://spaced.example/',
    'https://newlines.example/', 'https://trimmed.example/', 'https://unquoted.example/?q=1', 'https://after-script.example/',
  ]);
  for (const kept of ['in-comment', 'in-script', 'in-style', 'in-textarea', 'in-cdata', 'in-pi', 'in-title', 'not-href', 'second', 'abbr', 'unknown-entity',
    'shop.example/unsubscribe', 'unsubscribe/v1.abc', 'preferences/tok_1', 'opted-out', 'creds', 'still-script', 'list-unsub']) {
    t.match(out, kept, `${kept} left as it was`);
  }
  t.match(out, 'href="javascript:alert(1)"');
  t.match(out, 'href="mailto:a@b.example"');
});

t.test('scanner: end tags, raw text to its own end tag only', async (t) => {
  const ends: string[] = [];
  const starts: string[] = [];
  scanHtml('<body><script></scriptfoo></script ><p></body ><!-- </body> --></BODY>', (tag) => starts.push(tag.name), (name) => ends.push(name));
  t.same(starts, ['body', 'script', 'p']);
  t.same(ends, ['script', 'body', 'body']);
  const body = rewriteHtml('<body>a</body><!-- </body> -->', { ...plan, click: false }, tokens);
  t.match(body, /^<body>a<img [^>]+\/><\/body><!-- <\/body> -->$/, 'the pixel goes before the last </body> in markup');
});

t.test('trackableUrl: what counts as a followable link', async (t) => {
  const none = new Set<string>();
  t.equal(trackableUrl('https://a.example/p?q=1&amp;r=2', none), 'https://a.example/p?q=1&r=2');
  t.equal(trackableUrl('HTTP://A.example/', none), 'HTTP://A.example/');
  t.equal(trackableUrl('https://a.example/?x&y', none), undefined, 'a reference without ; that the standard may decode: left alone');
  t.equal(trackableUrl('https://a.example/?x=1&y=2', none), 'https://a.example/?x=1&y=2', '&name= stays literal');
  t.equal(trackableUrl('ftp://a.example/', none), undefined);
  t.equal(trackableUrl(`https://a.example/${'x'.repeat(3000)}`, none), undefined, 'too long to carry');
});

t.test('machine rules', async (t) => {
  const safari = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
  const apple = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';
  t.equal(machineReason({ kind: 'open', userAgent: safari, sinceSentS: 2 }), undefined);
  t.equal(machineReason({ kind: 'open', userAgent: apple, sinceSentS: 3600 }), 'privacy_proxy');
  t.equal(machineReason({ kind: 'open', userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)', sinceSentS: 4 }), 'proxy_prefetch');
  t.equal(machineReason({ kind: 'open', userAgent: 'Mozilla/5.0 (via ggpht.com GoogleImageProxy)', sinceSentS: 600 }), undefined, 'a proxy fetch long after arrival is the reader');
  t.equal(machineReason({ kind: 'open', userAgent: '', sinceSentS: 600 }), 'automated_client');
  t.equal(machineReason({ kind: 'click', userAgent: 'curl/8.5.0', sinceSentS: 600 }), 'automated_client');
  t.equal(machineReason({ kind: 'click', userAgent: 'Mozilla/5.0 Proofpoint URL Defense', sinceSentS: 600 }), 'automated_client');
  t.equal(machineReason({ kind: 'click', userAgent: safari, sinceSentS: 2 }), 'too_soon');
  t.equal(machineReason({ kind: 'click', userAgent: safari, sinceSentS: 60, sinceOtherClickMs: 300 }), 'link_burst');
  t.equal(machineReason({ kind: 'click', userAgent: safari, sinceSentS: 60, sinceOtherClickMs: 5000 }), undefined);
});
