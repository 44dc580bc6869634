import type { Test } from 'tap';
import { addContact } from './broadcasts.js';
import { call } from './http.js';
import type { EngagementRig } from './broadcast-engagement.js';

// One broadcast's engagement, end to end, the same on SQLite and on PostgreSQL: five readers get
// a tracked broadcast with two web links; a real client follows Ann's links (twice the first) and
// fetches her pixel; Bob's mail is opened by Apple's privacy proxy (a machine open); Cy's first link
// is followed by a link scanner (a machine click) and he opts out of the broadcast's topic on its
// preference page; Dee unsubscribes with one click and complains; Eve is unsubscribed through the
// API (not through the broadcast). Then clicked-links and every
// recipients type, raw and through the resend SDK, with and without `exclude_machine=true`.

const browser = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const appleProxy = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';
const scanner = 'Mozilla/5.0 (compatible; Proofpoint URL Defense)';
const readers = ['ann', 'bob', 'cy', 'dee', 'eve'];
const address = (name: string) => `${name}@inbox-one.net`;

export async function engagementScenario(t: Test, rig: EngagementRig): Promise<void> {
  const { app, clock, team, landing, resend } = rig;
  const base = app.baseUrl;
  const token = team.token;
  const contacts = new Map<string, string>();
  for (const name of readers) contacts.set(name, await addContact(app, token, { email: address(name), first_name: name }));
  const topic = await call(base, 'POST', '/topics', { token, body: { name: 'Spring', default_subscription: 'opt_in', visibility: 'public' } });
  const topicId = topic.body.id as string;
  const shop = 'https://shop.example/spring?utm=mail&amp;x=1';
  const { id, messages } = await rig.sendBroadcast(`<html><body><p>Hi {{{FIRST_NAME}}}, see <a href="${landing.url}/landing">the news</a>`
    + ` and <a href="${shop}">the shop</a>.</p><p><a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a></p></body></html>`, topicId);
  const landingUrl = `${landing.url}/landing`;
  const shopUrl = 'https://shop.example/spring?utm=mail&x=1';
  const get = (url: string, ua: string, follow = false) => fetch(url, { redirect: follow ? 'follow' : 'manual', headers: { 'user-agent': ua } });
  const msg = (name: string) => messages.get(address(name))!;
  const list = async (t: Test, path: string) => {
    const r = await call(base, 'GET', `/broadcasts/${id}${path}`, { token });
    t.equal(r.status, 200, `GET ${path}`, { body: r.body });
    return r.body as { object: string; has_more: boolean; data: Record<string, any>[] };
  };
  const emails = (page: { data: Record<string, any>[] }) => page.data.map((r) => String(r.email)).sort();

  t.test('each message is tracked; the unsubscribe link is not', async (t) => {
    for (const name of readers) {
      t.equal(msg(name).clicks.length, 2, `${name}: two tracked links`);
      t.ok(msg(name).pixel, `${name}: a pixel`);
      t.match(msg(name).html, /href="http:\/\/[^"]+\/unsubscribe\/[^"]+"/, `${name}: the unsubscribe link kept as it is`);
    }
    t.same(await list(t, '/clicked-links'), { object: 'list', has_more: false, data: [] }, 'no clicks before any hit');
    t.same((await list(t, '/recipients?type=opened')).data, [], 'no opens before any hit');
  });

  t.test('hits: a reader, a privacy proxy, a link scanner, a one-click unsubscribe, a complaint', async (t) => {
    clock.advance(120_000);
    const followed = await get(msg('ann').clicks[0]!, browser, true);
    t.equal(followed.status, 200);
    t.equal(followed.url, landingUrl, 'the real client landed on the original link');
    await rig.flush();
    clock.advance(15_000);
    t.equal((await get(msg('ann').clicks[0]!, browser)).status, 302, 'Ann follows the same link again later');
    clock.advance(3000);
    const toShop = await get(msg('ann').clicks[1]!, browser);
    t.equal(toShop.headers.get('location'), shopUrl);
    clock.advance(3000);
    t.equal((await get(msg('ann').pixel!, browser)).status, 200);
    t.equal((await get(msg('bob').pixel!, appleProxy)).status, 200);
    t.equal((await get(msg('cy').clicks[0]!, scanner)).status, 302);
    t.equal(landing.at('/landing').length, 1, 'only the followed click reached the landing page');
    const oneClick = await fetch(msg('dee').unsubscribe, { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    t.equal(oneClick.status, 200);
    t.equal((await app.appliance.services.sending.recorder.recordComplaint(`${msg('dee').emailId}.0`)), true, 'Dee\'s complaint recorded');
    const patched = await call(base, 'PATCH', `/contacts/${contacts.get('eve')}`, { token, body: { unsubscribed: true } });
    t.equal(patched.status, 200, 'Eve unsubscribed through the API, not through the broadcast');
    // Cy opts out of the broadcast's topic on the preference page its message leads to.
    const preferences = msg('cy').unsubscribe.replace('/unsubscribe/', '/preferences/');
    const form = new URLSearchParams([['action', 'save'], ['shown', topicId]]);
    const saved = await fetch(preferences, { method: 'POST', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    t.equal(saved.status, 200);
    const cyTopics = await call(base, 'GET', `/contacts/${contacts.get('cy')}/topics`, { token });
    t.match(cyTopics.body.data, [{ id: topicId, subscription: 'opt_out' }], 'Cy opted out of the topic');
    await rig.flush();
  });

  t.test('clicked links: clicks and unique clicks per link, machine clicks counted unless excluded', async (t) => {
    const links = await list(t, '/clicked-links');
    t.same(links.data.map((l) => [l.url, l.clicks, l.unique_clicks]), [[shopUrl, 1, 1], [landingUrl, 3, 2]], 'newest first clicked first');
    t.ok(links.data.every((l) => typeof l.id === 'string' && Object.keys(l).sort().join() === 'clicks,id,unique_clicks,url'), 'the SDK\'s shape');
    const human = await list(t, '/clicked-links?exclude_machine=true');
    t.same(human.data.map((l) => [l.url, l.clicks, l.unique_clicks]), [[shopUrl, 1, 1], [landingUrl, 2, 1]], 'the scanner\'s click left out');
    const first = await list(t, '/clicked-links?limit=1');
    t.equal(first.has_more, true);
    const second = await list(t, `/clicked-links?limit=1&after=${first.data[0]!.id}`);
    t.same(second.data.map((l) => l.url), [landingUrl]);
    t.equal(second.has_more, false);
    const back = await list(t, `/clicked-links?limit=1&before=${second.data[0]!.id}`);
    t.same(back.data.map((l) => l.url), [shopUrl]);
    const refused = await call(base, 'GET', `/broadcasts/${id}/clicked-links?exclude_machine=maybe`, { token });
    t.equal(refused.status, 422);
    t.equal(refused.body.name, 'invalid_parameter');

    const sdk = await resend.broadcasts.clickedLinks(id);
    t.equal(sdk.error, null, JSON.stringify(sdk.error));
    t.same(sdk.data, links, 'the SDK reads the same list');
    const paged = await resend.broadcasts.clickedLinks(id, { limit: 1, after: first.data[0]!.id });
    t.same(paged.data?.data.map((l) => l.url), [landingUrl]);
  });

  t.test('recipients: opened and clicked with their counts and links', async (t) => {
    const opened = await list(t, '/recipients?type=opened');
    t.same(opened.data.map((r) => [r.email, r.count]).sort(), [[address('ann'), 1], [address('bob'), 1]]);
    t.match(opened.data.find((r) => r.email === address('ann')), { id: contacts.get('ann'), contact_id: contacts.get('ann'), email_id: msg('ann').emailId });
    t.same(emails(await list(t, '/recipients?type=opened&exclude_machine=true')), [address('ann')], 'the privacy proxy\'s open left out');
    const clicked = await list(t, '/recipients?type=clicked');
    t.same(emails(clicked), [address('ann'), address('cy')]);
    t.match(clicked.data.find((r) => r.email === address('ann')), { count: 3, clicked_links: [{ url: landingUrl, clicks: 2 }, { url: shopUrl, clicks: 1 }] });
    t.match(clicked.data.find((r) => r.email === address('cy')), { count: 1, clicked_links: [{ url: landingUrl, clicks: 1 }] });
    const human = await list(t, '/recipients?type=clicked&exclude_machine=true');
    t.same(human.data.map((r) => [r.email, r.count, r.clicked_links.length]), [[address('ann'), 3, 2]]);
    t.same(emails(await list(t, `/recipients?type=clicked&email=${encodeURIComponent(address('cy'))}`)), [address('cy')], 'the email filter');

    const sdkOpened = await resend.broadcasts.recipients(id, { type: 'opened' });
    t.equal(sdkOpened.error, null, JSON.stringify(sdkOpened.error));
    t.same(sdkOpened.data, opened, 'the SDK reads the same list');
    const sdkClicked = await resend.broadcasts.recipients(id, { type: 'clicked', limit: 1 });
    t.equal(sdkClicked.data?.has_more, true);
    t.equal(sdkClicked.data?.data.length, 1);
    t.ok(Array.isArray(sdkClicked.data?.data[0]?.clicked_links));
  });

  t.test('recipients: complained, unsubscribed, and the types read before', async (t) => {
    t.same(emails(await list(t, '/recipients?type=complained')), [address('dee')]);
    t.same(emails(await list(t, '/recipients?type=unsubscribed')), [address('cy'), address('dee')], 'through this broadcast only: Eve is not listed');
    const sdkComplained = await resend.broadcasts.recipients(id, { type: 'complained' });
    t.same(sdkComplained.data?.data.map((r) => r.email), [address('dee')]);
    const sdkUnsubscribed = await resend.broadcasts.recipients(id, { type: 'unsubscribed' });
    t.same(sdkUnsubscribed.data?.data.map((r) => [r.email, r.contact_id]), [[address('dee'), contacts.get('dee')], [address('cy'), contacts.get('cy')]], 'newest contact first');
    t.same(emails(await list(t, '/recipients?type=sent&limit=100')), readers.map(address));
    t.same(emails(await list(t, '/recipients?type=delivered&limit=100')), readers.map(address));
    t.same((await list(t, '/recipients?type=bounced')).data, []);
    const dee = await call(base, 'GET', `/contacts/${contacts.get('dee')}`, { token });
    t.equal(dee.body.unsubscribed, true, 'the one-click unsubscribe reached the contact');
    // A second one-click from the same link changes nothing and marks nothing twice.
    const again = await fetch(msg('dee').unsubscribe, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    t.equal(again.status, 200);
    t.same(emails(await list(t, '/recipients?type=unsubscribed')), [address('cy'), address('dee')]);
  });
}
