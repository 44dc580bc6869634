import t, { type Test } from 'tap';
import { pino } from 'pino';
import { ServiceError } from '../../core/errors.js';
import { brandKitUploads } from '../../core/team/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { call, CALL_TIMEOUT_MS } from '../helpers/http.js';
import { jpeg, png } from '../helpers/images.js';

// POST /team/brand-kit/uploads: the type read from the bytes, the size and pixel limits, SVGs
// refused when the sanitiser would have to change what matters, the hosted URL served on the
// public router with headers that keep it inert, the logo_url rule for hosted uploads on a
// loopback (http) appliance, and who may upload.
const app = await startTestAppliance();
t.teardown(() => app.stop());
const base = app.baseUrl;
const db = app.appliance.services.database.db;

const upload = (token: string, content: unknown) => call(base, 'POST', '/team/brand-kit/uploads', { token, body: { content } });
const b64 = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64');
const stored = async (teamId: string) => db.selectFrom('brand_kit_uploads').selectAll().where('team_id', '=', teamId).execute();

/** GET of a hosted URL: status, headers and the raw bytes. */
async function fetchHosted(url: string, method = 'GET') {
  const res = await fetch(url, { method, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

const safeHeaders = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'public, max-age=31536000, immutable',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
};

/** Expects a 422 validation_error on `content` whose message matches `pattern`. */
function refused(t: Test, r: { status: number; body: any }, pattern: RegExp, what: string) {
  t.equal(r.status, 422, `${what}: 422`);
  t.equal(r.body?.name, 'validation_error', `${what}: validation_error`);
  t.equal(r.body?.errors?.[0]?.path, 'content', `${what}: names content`);
  t.match(r.body?.message, pattern, `${what}: ${r.body?.message}`);
}

t.test('a PNG and a JPEG are stored with the type and pixel size read from their bytes, and served as sent', async (t) => {
  const { token, teamId } = await app.newTeam('Raster');
  for (const [bytes, type, ext, width, height] of [[png(3, 2), 'image/png', 'png', 3, 2], [jpeg(16, 8), 'image/jpeg', 'jpg', 16, 8]] as const) {
    const r = await upload(token, b64(bytes));
    t.equal(r.status, 201, type);
    t.same(r.body, {
      object: 'brand_kit_upload', id: r.body.id, url: `${base}/brand-kit/${r.body.id}.${ext}`, content_type: type,
      size: bytes.length, width, height, created_at: r.body.created_at,
    });
    const served = await fetchHosted(r.body.url);
    t.equal(served.status, 200);
    t.equal(served.headers.get('content-type'), type);
    t.ok(served.bytes.equals(bytes), 'the bytes as sent');
    for (const [name, value] of Object.entries(safeHeaders)) t.equal(served.headers.get(name), value, name);
  }
  t.equal((await stored(teamId)).length, 2);
});

t.test('a PNG declared as a JPEG (data: URL) is stored and served as a PNG', async (t) => {
  const { token } = await app.newTeam('Renamed');
  const r = await upload(token, `data:image/jpeg;base64,${b64(png(2, 2))}`);
  t.equal(r.status, 201);
  t.equal(r.body.content_type, 'image/png');
  t.match(r.body.url, /\.png$/);
  t.equal((await fetchHosted(r.body.url)).headers.get('content-type'), 'image/png');
  t.equal((await fetchHosted(r.body.url.replace(/\.png$/, '.jpg'))).status, 404, 'not under the declared type');
});

t.test('PNG and JPEG: at most 256 KB and 4096 pixels a side', async (t) => {
  const { token, teamId } = await app.newTeam('Limits');
  t.equal((await upload(token, b64(png(1, 1, { totalBytes: 256 * 1024 })))).status, 201, 'exactly 256 KB passes');
  refused(t, await upload(token, b64(png(1, 1, { totalBytes: 256 * 1024 + 1 }))), /at most 256 KB \(262144 bytes\); this file is 262145 bytes/, 'one byte over');
  refused(t, await upload(token, 'A'.repeat(1_000_000)), /larger than 256 KB/, 'a megabyte of base64');
  t.equal((await upload(token, b64(png(4096, 1)))).status, 201, '4096 pixels wide passes');
  refused(t, await upload(token, b64(png(4097, 1))), /4097×1 pixels; each side may be at most 4096/, 'a PNG 4097 wide');
  refused(t, await upload(token, b64(jpeg(8, 4097))), /8×4097 pixels/, 'a JPEG 4097 high');
  t.equal((await stored(teamId)).length, 2, 'nothing refused was stored');
});

t.test('GIF, HTML, garbage and bad base64 are refused', async (t) => {
  const { token, teamId } = await app.newTeam('Not images');
  const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
  refused(t, await upload(token, b64(gif)), /GIF images are not accepted/, 'GIF');
  refused(t, await upload(token, b64('<!doctype html><html><body><svg><script>alert(1)</script></svg></body></html>')), /not a PNG, JPEG or SVG/, 'HTML');
  refused(t, await upload(token, b64('<html xmlns="http://www.w3.org/1999/xhtml"><body>hi</body></html>')), /not a PNG, JPEG or SVG/, 'XHTML');
  refused(t, await upload(token, b64(Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]))), /not a PNG, JPEG or SVG/, 'garbage');
  refused(t, await upload(token, b64(png(4, 4).subarray(0, 20))), /header cannot be read/, 'a cut PNG');
  refused(t, await upload(token, 'not base64!'), /not valid base64/, 'bad base64');
  const missing = await call(base, 'POST', '/team/brand-kit/uploads', { token, body: {} });
  t.equal(missing.status, 422);
  t.equal(missing.body.name, 'missing_required_field');
  const wrongType = await upload(token, 12);
  t.equal(wrongType.status, 400);
  t.equal(wrongType.body.name, 'validation_error');
  t.equal((await stored(teamId)).length, 0);
});

const svg = (inner: string, attrs = '') =>
  `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10"${attrs}>${inner}</svg>`;

t.test('an SVG the sanitiser would change in a way that matters is refused, with what it holds', async (t) => {
  const { token, teamId } = await app.newTeam('Hostile SVG');
  const cases: [string, string, RegExp][] = [
    ['<script>', svg('<script>alert(1)</script><rect width="1" height="1"/>'), /a script \(<script>\)/],
    ['onload=', svg('<rect width="1" height="1"/>', ' onload="alert(1)"'), /an event handler \(onload= on <svg>\)/],
    ['<a href="https://…">', svg('<a href="https://evil.example/"><rect width="1" height="1"/></a>'), /href="https:\/\/evil\.example\/" on <a>/],
    ['<a xlink:href="javascript:…">', svg('<a xlink:href="javascript:alert(1)"><rect width="1" height="1"/></a>'), /xlink:href="javascript:alert\(1\)" on <a>/],
    ['<animate>', svg('<rect width="1" height="1"><animate attributeName="x" to="5" dur="1s"/></rect>'), /animation \(<animate>\)/],
    ['<set>', svg('<rect width="1" height="1"><set attributeName="x" to="5"/></rect>'), /animation \(<set>\)/],
    ['<animateTransform>', svg('<rect width="1" height="1"><animateTransform attributeName="transform" type="rotate" to="90"/></rect>'), /<animateTransform>/],
    ['<foreignObject>', svg('<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">hi</div></foreignObject>'), /embedded HTML or MathML \(<foreignObject>\)/],
    ['external <image href>', svg('<image href="https://evil.example/x.png" width="1" height="1"/>'), /href="https:\/\/evil\.example\/x\.png" on <image>/],
    ['external <use>', svg('<use href="https://evil.example/s.svg#a"/>'), /on <use>/],
    ['url() to another file', svg('<rect width="1" height="1" fill="url(https://evil.example/p.svg#p)"/>'), /url\(https:\/\/evil\.example/],
    ['@import', svg('<style>@import url(https://evil.example/x.css);</style>'), /an @import \(in <style>\)/],
    ['CSS animation', svg('<style>@keyframes s{to{opacity:0}} rect{animation:s 1s}</style>'), /CSS animation/],
    ['xml-stylesheet', `<?xml-stylesheet href="https://evil.example/x.css"?>${svg('')}`, /<\?xml-stylesheet\?>/],
    ['DOCTYPE', `<!DOCTYPE svg [<!ENTITY a "aaaaaaaa">]>${svg('<text>&a;</text>')}`, /DOCTYPE/],
    ['not well-formed', '<svg xmlns="http://www.w3.org/2000/svg"><rect>', /not well-formed/],
  ];
  for (const [what, text, pattern] of cases) refused(t, await upload(token, b64(text)), pattern, what);
  refused(t, await upload(token, b64(svg(`<desc>${'x'.repeat(32 * 1024)}</desc>`))), /An SVG may be at most 32 KB/, 'over 32 KB');
  t.equal((await stored(teamId)).length, 0, 'nothing refused was stored');
});

t.test('an SVG that would stall the parser or the sanitiser is refused before either reads it', async (t) => {
  const { token, teamId } = await app.newTeam('Heavy SVG');
  const nested = (levels: number, open = '<g>') => svg(open.repeat(levels) + '</g>'.repeat(levels));
  const deepest = Math.floor((32 * 1024 - 200) / 7); // as deep as 32 KB of <g></g> goes: a stack overflow for the parser
  refused(t, await upload(token, b64(nested(deepest))), /at most 1000 elements/, `${deepest} levels`);
  refused(t, await upload(token, b64(nested(65))), /nest at most 64 deep; this one nests 66/, '65 groups in the root');
  refused(t, await upload(token, b64(nested(65, '<g class="/>">'))), /nests 66/, 'a "/>" inside a quoted value does not close the tag');
  refused(t, await upload(token, b64(nested(65, '<!-- <g/> --><g>'))), /nests 66/, 'tags in comments are not counted');
  refused(t, await upload(token, b64(svg('<rect/>'.repeat(1000)))), /at most 1000 elements; this one holds 1001/, '1,001 elements');
  t.equal((await upload(token, b64(nested(63)))).status, 201, '64 deep passes');
  t.equal((await upload(token, b64(svg('<rect/>'.repeat(999))))).status, 201, '1,000 elements pass');
  t.equal((await stored(teamId)).length, 2);
});

t.test('a clean SVG is stored as the sanitiser wrote it and served with exactly the safe headers', async (t) => {
  const { token, teamId } = await app.newTeam('Clean SVG');
  const clean = svg('<title>Acme</title><defs><linearGradient id="g"><stop offset="0" stop-color="#2563eb"/></linearGradient></defs>'
    + '<rect width="10" height="10" fill="url(#g)"/><use href="#g"/><a href="#top"><text x="1" y="8">Acme &amp; Co</text></a>');
  const r = await upload(token, b64(clean));
  t.equal(r.status, 201);
  t.equal(r.body.content_type, 'image/svg+xml');
  t.equal(r.body.width, null);
  t.match(r.body.url, new RegExp(`^${base}/brand-kit/[0-9a-f-]{36}\\.svg$`));
  const served = await fetchHosted(r.body.url);
  t.equal(served.status, 200);
  t.equal(served.bytes.toString(), clean, 'nothing of the drawing was changed');
  const headers = Object.fromEntries([...served.headers].filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name) && !name.startsWith('ratelimit-')));
  t.same(headers, {
    ...safeHeaders, 'content-type': 'image/svg+xml', 'content-length': String(served.bytes.length), 'x-request-id': served.headers.get('x-request-id'),
  }, 'these headers and no others');
  t.match(served.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'the request id every answer carries');
  const head = await fetchHosted(r.body.url, 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.bytes.length, 0);
  t.equal(head.headers.get('content-security-policy'), safeHeaders['content-security-policy']);
  t.equal((await fetchHosted(`${base}/api/v1/brand-kit/${r.body.id}.svg`)).status, 200, 'also under /api/v1');
  t.equal((await stored(teamId))[0]!.content.toString(), clean);
});

t.test('an editor\'s metadata and comments go quietly; the stored file is the sanitiser\'s output', async (t) => {
  const { token } = await app.newTeam('Editor export');
  const exported = '<?xml version="1.0" encoding="UTF-8"?>\n<!-- Created with an editor -->\n'
    + '<svg xmlns="http://www.w3.org/2000/svg" xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape" '
    + 'xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd" sodipodi:docname="logo.svg" viewBox="0 0 4 4">'
    + '<sodipodi:namedview id="view" inkscape:zoom="2"/><!-- layer --><style><![CDATA[.a{fill:#f00}]]></style>'
    + '<rect class="a" width="4" height="4" inkscape:label="box"/></svg>';
  const r = await upload(token, b64(exported));
  t.equal(r.status, 201);
  const served = (await fetchHosted(r.body.url)).bytes.toString();
  t.equal(served, '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4"><style>.a{fill:#f00}</style><rect class="a" width="4" height="4"/></svg>');
  t.equal(r.body.size, Buffer.byteLength(served));
});

t.test('hosted URLs: an unknown id, another extension or a made-up name is 404 with the error body', async (t) => {
  const { token } = await app.newTeam('Lookups');
  const r = await upload(token, b64(png(1, 1)));
  for (const path of [`/brand-kit/${crypto.randomUUID()}.png`, `/brand-kit/${r.body.id}.svg`, `/brand-kit/${r.body.id}`, '/brand-kit/..%2Fsvc.sqlite']) {
    const res = await fetchHosted(base + path);
    t.equal(res.status, 404, path);
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    t.same(JSON.parse(res.bytes.toString()), { statusCode: 404, name: 'not_found', message: 'No such image.' });
  }
});

t.test('logo_url takes the team\'s own hosted upload on a loopback (http) appliance, never another team\'s', async (t) => {
  const a = await app.newTeam('Logo A');
  const b = await app.newTeam('Logo B');
  const mine = (await upload(a.token, b64(png(2, 2)))).body.url as string;
  const theirs = (await upload(b.token, b64(png(2, 2)))).body.url as string;
  t.match(mine, /^http:\/\/127\.0\.0\.1:/, 'the link base of a loopback appliance is http');
  const kit = (logo_url: string) => ({ brand_kit: { logo_url, primary_color: null, accent_color: null, font: null, button_style: null, company_name: null, address: null, footer_text: null } });
  const ok = await call(base, 'PATCH', '/team', { token: a.token, body: kit(mine) });
  t.equal(ok.status, 200);
  t.equal(ok.body.brand_kit.logo_url, mine);
  t.equal((await call(base, 'GET', '/team', { token: a.token })).body.brand_kit.logo_url, mine);
  for (const [what, url] of [['another team\'s upload', theirs], ['an id never uploaded', `${base}/brand-kit/${crypto.randomUUID()}.png`], ['the wrong extension', mine.replace(/\.png$/, '.svg')]]) {
    const r = await call(base, 'PATCH', '/team', { token: a.token, body: kit(url!) });
    t.equal(r.status, 422, what!);
    t.same(r.body.errors, [{ path: 'brand_kit.logo_url', message: r.body.message }], what!);
    t.match(r.body.message, /names no image this team uploaded/);
  }
  const http = await call(base, 'PATCH', '/team', { token: a.token, body: kit('http://cdn.example.com/logo.png') });
  t.equal(http.status, 422, 'any other http URL is still refused');
  t.equal((await call(base, 'GET', '/team', { token: a.token })).body.brand_kit.logo_url, mine, 'the refusals changed nothing');
});

t.test('uploads need a full_access key; there is no listing to reach another team\'s', async (t) => {
  const restricted = await app.newTeam('Sending only', 'sending_access');
  const r = await upload(restricted.token, b64(png(1, 1)));
  t.equal(r.status, 401);
  t.equal(r.body.name, 'restricted_api_key');
  t.equal((await stored(restricted.teamId)).length, 0);
  const none = await call(base, 'POST', '/team/brand-kit/uploads', { body: { content: b64(png(1, 1)) } });
  t.equal(none.status, 401);
  t.equal(none.body.name, 'missing_api_key');
  const owner = await app.newTeam('Owner');
  await upload(owner.token, b64(png(1, 1)));
  const list = await call(base, 'GET', '/team/brand-kit/uploads', { token: (await app.newTeam('Other')).token });
  t.equal(list.status, 405, 'uploads are not listed, by any team');
});

t.test('with no link base nothing is stored (503)', async (t) => {
  const { teamId } = await app.newTeam('No links');
  const service = brandKitUploads({
    db, clock: app.appliance.services.clock, logger: pino({ level: 'silent' }),
    linkBase: () => { throw new ServiceError(503, 'service_unavailable', 'Links cannot be made.'); },
  });
  const err = await service.upload(teamId, { content: b64(png(1, 1)) }).then(() => undefined, (e: unknown) => e);
  t.match(err, { statusCode: 503, errorName: 'service_unavailable' });
  t.equal((await stored(teamId)).length, 0);
});
