import t from 'tap';
import { eventsOf } from '../helpers/email-fixtures.js';
import { call } from '../helpers/http.js';
import { getMetrics } from '../helpers/metrics-fixtures.js';
import { startTrackingRig, trackingLinks } from '../helpers/tracking.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

// Open and click tracking end to end: POST /emails from a domain with both toggles on → the
// outbound MTA rewrites the HTML per recipient → the fake MX receives it → a real HTTP client
// follows a rewritten link (302 to the original, landing on a real server) and fetches the pixel
// → email.opened / email.clicked in the outbox and at a webhook endpoint, last_event, metrics.
const rig = await startTrackingRig();
const landing = await startWebhookReceiver();
t.teardown(async () => { await rig.stop(); await landing.stop(); });
const { app, clock, team, tracking } = rig;
const base = app.baseUrl;
const safari = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
const html = (landingUrl: string) => '<!doctype html><html><body><p>Hello <a href="' + landingUrl + '">our shop</a>,'
  + ' <a href="https://shop.example/item?a=1&amp;b=2">an item</a>, <a href="mailto:help@tracked.net">help</a>.</p>'
  + '<p><a href="https://svc.example/unsubscribe/v1.tok.en">Unsubscribe</a> · <a href="https://svc.example/preferences/v1.tok.en">Preferences</a>'
  + ' · <a href="https://list.example/u/42">list</a></p></body></html>';
const text = 'Hello, our shop: https://shop.example/item?a=1&b=2 and unsubscribe: https://svc.example/unsubscribe/v1.tok.en';
const listUnsubscribe = { 'List-Unsubscribe': '<https://list.example/u/42>' };
const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { redirect: 'manual', headers: { 'user-agent': safari, ...headers } });

// One tracked email to two recipients; read only when delivered.
const emailId = await rig.send({
  to: ['ann@inbox-one.net', 'bob@inbox-two.net'], html: html(`${landing.url}/landing?from=mail`), text,
  headers: { 'List-Unsubscribe': '<https://list.example/u/42>' }, tags: { campaign: 'spring' },
});
await rig.until(emailId, 'delivered');
const ann = await rig.received('ann@inbox-one.net', emailId);
const bob = await rig.received('bob@inbox-two.net', emailId);
const annLinks = trackingLinks(ann.html);
const bobLinks = trackingLinks(bob.html);
// A reader opens it two minutes later: no machine rule applies.
clock.advance(120_000);
const firstClickAt = clock.now().toISOString();
const laterAt = new Date(clock.now().getTime() + 5000).toISOString();

t.test('the HTML is rewritten per recipient; text, mailto and unsubscribe links are not', async (t) => {
  t.equal(annLinks.clicks.length, 2, 'the two web links are tracked');
  t.ok(annLinks.pixel, 'an open pixel');
  t.ok(annLinks.clicks.every((l) => l.startsWith(`${base}/t/c/`)), 'links on the link base (tracking_links: link_base)');
  t.notSame(annLinks.clicks, bobLinks.clicks, 'each recipient has its own tokens');
  t.not(annLinks.pixel, bobLinks.pixel);
  t.match(ann.html, /<img src="[^"]+\.gif"[^>]*\/><\/body>/, 'the pixel sits before </body>');
  for (const kept of ['href="mailto:help@tracked.net"', 'href="https://svc.example/unsubscribe/v1.tok.en"', 'href="https://svc.example/preferences/v1.tok.en"', 'href="https://list.example/u/42"']) {
    t.ok(ann.html.includes(kept), `${kept} untouched`);
  }
  t.notMatch(ann.html, /shop\.example|landing/, 'the original web links appear only inside tokens');
  t.equal(ann.text.trim(), text, 'the text part keeps plain links');
  t.equal(ann.raw.dkim, 'pass', 'each recipient\'s message is DKIM-signed');
});

t.test('a click: 302 to the original link, followed by a real client to the landing page', async (t) => {
  const manual = await get(annLinks.clicks[1]!);
  t.equal(manual.status, 302);
  t.equal(manual.headers.get('location'), 'https://shop.example/item?a=1&b=2', 'the link as the browser would have followed it');
  t.match(manual.headers.get('cache-control'), /no-store/);
  // The next link a little later (a reader, not a scanner following every link at once).
  clock.advance(5000);
  const followed = await fetch(annLinks.clicks[0]!, { headers: { 'user-agent': safari } });
  t.equal(followed.status, 200);
  t.equal(followed.url, `${landing.url}/landing?from=mail`);
  t.equal(landing.at('/landing').length, 1, 'the landing server was reached');
});

t.test('the pixel: a 1×1 GIF, never cached', async (t) => {
  const r = await get(annLinks.pixel!);
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'image/gif');
  t.match(r.headers.get('cache-control'), /no-store/);
  const body = Buffer.from(await r.arrayBuffer());
  t.equal(body.subarray(0, 6).toString(), 'GIF89a');
  t.equal(body.readUInt16LE(6), 1);
  t.equal(body.readUInt16LE(8), 1);
});

t.test('events: email.clicked and email.opened with the spec\'s fields, last_event, webhooks', async (t) => {
  await tracking.flush();
  const events = (await eventsOf(app, emailId)).filter((e) => e.type === 'email.opened' || e.type === 'email.clicked');
  t.same(events.map((e) => e.type), ['email.clicked', 'email.clicked', 'email.opened']);
  t.same(events[0]!.data.click, { ipAddress: '127.0.0.1', link: 'https://shop.example/item?a=1&b=2', timestamp: firstClickAt, userAgent: safari, machine: false });
  t.match(events[1]!.data.click, { link: `${landing.url}/landing?from=mail`, timestamp: laterAt, machine: false });
  t.same(events[2]!.data.open, { ipAddress: '127.0.0.1', timestamp: laterAt, userAgent: safari, machine: false });
  t.match(events[2]!.data, { email_id: emailId, to: ['ann@inbox-one.net'], from: 'Shop <news@tracked.net>', subject: 'News', tags: { campaign: 'spring' } });
  const email = await call(base, 'GET', `/emails/${emailId}`, { token: team.token });
  t.equal(email.body.last_event, 'opened');
  // A webhook endpoint created now sees what is written from now on: Bob's click.
  const hook = await call(base, 'POST', '/webhooks', { token: team.token, body: { endpoint: `${landing.url}/hook`, events: ['email.opened', 'email.clicked'] } });
  t.equal(hook.status, 201, JSON.stringify(hook.body));
  t.equal((await get(bobLinks.clicks[0]!)).status, 302);
  await tracking.flush();
  await app.appliance.services.webhookDispatcher.runDue();
  const [delivery] = await landing.waitFor(1, '/hook');
  const payload = JSON.parse(delivery!.body);
  t.equal(payload.type, 'email.clicked');
  t.match(payload.data, { email_id: emailId, to: ['bob@inbox-two.net'], click: { ipAddress: '127.0.0.1', link: `${landing.url}/landing?from=mail`, userAgent: safari, machine: false } });
  t.equal((await call(base, 'GET', `/emails/${emailId}`, { token: team.token })).body.last_event, 'clicked');
});

t.test('metrics: opened, clicked and the unique counts (repeat readers counted repeatedly)', async (t) => {
  // Ann opens again from another client, and clicks the same link twice at once (one hit).
  clock.advance(5000);
  t.equal((await get(annLinks.pixel!, { 'user-agent': `${safari} Mail/2` })).status, 200);
  t.equal((await get(annLinks.clicks[1]!, { 'user-agent': `${safari} Mail/2` })).status, 302);
  t.equal((await get(annLinks.clicks[1]!, { 'user-agent': `${safari} Mail/2` })).status, 302);
  // A HEAD is answered and not recorded.
  t.equal((await fetch(annLinks.pixel!, { method: 'HEAD', headers: { 'user-agent': safari } })).status, 200);
  await tracking.flush();
  // Metrics reach the last whole minute.
  clock.advance(120_000);
  const r = await getMetrics(base, team.token, { email_id: emailId, metrics: 'delivered,opened,clicked,unique_opened,unique_clicked,open_rate' });
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.same(r.body.totals, { delivered: 2, opened: 2, clicked: 4, unique_opened: 1, unique_clicked: 1, open_rate: 1 });
});

t.test('forged, altered, cut or misused tokens are one 404; no open redirect', async (t) => {
  const token = annLinks.clicks[1]!.split('/t/c/')[1]!;
  const pixelToken = annLinks.pixel!.split('/t/o/')[1]!.replace(/\.gif$/, '');
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const refused = [
    `/t/c/${flip(token, 5)}`, `/t/c/${flip(token, token.length - 3)}`, `/t/c/${token.slice(0, -4)}`, `/t/c/${token}x`,
    `/t/c/${pixelToken}`, `/t/o/${token}.gif`, `/t/o/${flip(pixelToken, 10)}.gif`, `/t/o/${pixelToken}`,
    '/t/c/https://evil.example/', `/t/c/${encodeURIComponent('https://evil.example/')}`, '/t/c/', '/t/o/.gif',
  ];
  for (const path of refused) {
    const r = await get(`${base}${path}`);
    t.equal(r.status, 404, path);
    t.equal(r.headers.get('location'), null);
  }
  // A URL swapped in under the same head and MAC.
  const bytes = Buffer.from(token, 'base64url');
  const swapped = Buffer.concat([bytes.subarray(0, 25), Buffer.from('https://evil.example/x?a=1&b=2'), bytes.subarray(bytes.length - 16)]).toString('base64url');
  t.equal((await get(`${base}/t/c/${swapped}`)).status, 404, 'another URL in a genuine token');
  const withQuery = await get(`${base}/t/c/${token}?url=https://evil.example/`);
  t.equal(withQuery.headers.get('location'), 'https://shop.example/item?a=1&b=2', 'a query string never picks the target');
  t.equal((await fetch(`${base}/t/c/${token}`, { method: 'POST' })).status, 405);
  t.equal((await get(`${base}/api/v1/t/c/${token}`)).status, 302, 'also under /api/v1');
});

t.test('machine hits: flagged in the event, left out of metrics with exclude_machine=true', async (t) => {
  const id = await rig.send({ to: 'cat@inbox-one.net', html: html('https://shop.example/a'), text, headers: listUnsubscribe });
  await rig.until(id, 'delivered');
  const links = trackingLinks((await rig.received('cat@inbox-one.net', id)).html);
  // A scanner follows both links at once, a second after delivery; Apple's proxy fetches the image.
  clock.advance(1000);
  for (const link of links.clicks) t.equal((await get(link, { 'user-agent': safari })).status, 302);
  const apple = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';
  t.equal((await get(links.pixel!, { 'user-agent': apple })).status, 200);
  // Much later, the reader opens it and clicks once, like a person.
  clock.advance(600_000);
  t.equal((await get(links.pixel!)).status, 200);
  clock.advance(20_000);
  t.equal((await get(links.clicks[0]!)).status, 302);
  await tracking.flush();
  const hits = (await eventsOf(app, id)).filter((e) => e.type === 'email.opened' || e.type === 'email.clicked')
    .map((e) => [e.type, (e.data.open ?? e.data.click).machine, (e.data.open ?? e.data.click).machineReason]);
  t.same(hits, [
    ['email.clicked', true, 'too_soon'], ['email.clicked', true, 'too_soon'], ['email.opened', true, 'privacy_proxy'],
    ['email.opened', false, undefined], ['email.clicked', false, undefined],
  ]);
  clock.advance(120_000);
  const names = 'opened,clicked,unique_opened,unique_clicked';
  const all = await getMetrics(base, team.token, { email_id: id, metrics: names });
  t.same(all.body.totals, { opened: 2, clicked: 3, unique_opened: 1, unique_clicked: 1 });
  const people = await getMetrics(base, team.token, { email_id: id, metrics: names, exclude_machine: 'true' });
  t.same(people.body.totals, { opened: 1, clicked: 1, unique_opened: 1, unique_clicked: 1 });
  // Unique counts without machines come at the first human hit: per minute, the series shows it.
  const series = await getMetrics(base, team.token, { email_id: id, metrics: 'unique_opened', exclude_machine: 'true', dimensions: 'email' });
  t.same(series.body.data, [{ email_id: id, unique_opened: 1 }]);
  const bad = await getMetrics(base, team.token, { exclude_machine: 'yes' });
  t.equal(bad.status, 422);
  t.equal(bad.body.name, 'invalid_parameter');
});

t.test('a link burst: every link after the first within a second is a machine\'s', async (t) => {
  const id = await rig.send({ to: 'dan@inbox-one.net', html: html('https://shop.example/b'), text, headers: listUnsubscribe });
  await rig.until(id, 'delivered');
  const links = trackingLinks((await rig.received('dan@inbox-one.net', id)).html);
  clock.advance(300_000);
  await Promise.all(links.clicks.map((l) => get(l)));
  await tracking.flush();
  const flags = (await eventsOf(app, id)).filter((e) => e.type === 'email.clicked').map((e) => e.data.click.machineReason);
  t.same(flags, ['link_burst', 'link_burst'], 'both clicks of the burst, the first flagged while it waited for its commit');
});

t.test('a domain with tracking off sends the HTML as written', async (t) => {
  const r = await call(base, 'POST', '/emails', { token: team.token, body: { from: 'news@plain.net', to: 'eve@inbox-one.net', subject: 'Plain', html: html('https://shop.example/c'), text } });
  t.equal(r.status, 200);
  await rig.until(r.body.id, 'delivered');
  const plain = await rig.received('eve@inbox-one.net', r.body.id);
  t.same(trackingLinks(plain.html), { clicks: [], pixel: undefined });
  t.match(plain.html, 'href="https://shop.example/item?a=1&amp;b=2"');
});
