import t from 'tap';
import { escapeHtml } from '../../api/public/html.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentRecords, platformEvents } from '../helpers/audience.js';
import { call } from '../helpers/http.js';
import { audienceFixture, checkboxes, linksOf, page, pathOf } from '../helpers/preferences.js';

// The preference page over real HTTP: what it shows (sender identity, the topics the spec makes
// visible, each box at its effective subscription), how it is served (CSP, nosniff, no referrer,
// noindex, escaped team text), and what its forms write (choices with consent records and
// svc:topic.* platform events, unsubscribe from everything, resubscribe).
const app = await startTestAppliance();
t.teardown(() => app.stop());
const base = app.baseUrl;

t.test('escapeHtml: the five characters that matter, nothing else', async (t) => {
  t.equal(escapeHtml(`<script>alert("x")</script> & 'y'`), '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;');
  t.equal(escapeHtml('Grüße — 東京 ✓'), 'Grüße — 東京 ✓');
  t.equal(escapeHtml('&amp;'), '&amp;amp;', 'escaping twice is visible, never undone');
  t.equal(escapeHtml(''), '');
});

t.test('what the page shows, and how it is served', async (t) => {
  const f = await audienceFixture(app, 'Shown', 'Acme <b>News</b> & "Friends"');
  await call(base, 'PATCH', `/topics/${f.topics.offers}`, { token: f.token, body: { description: '<img src=x onerror=alert(1)>' } });
  const r = await page(base, 'GET', pathOf(linksOf(app, f.teamId, f.contactId, f.email).preferencesUrl));
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/html; charset=utf-8/);
  const csp = r.headers.get('content-security-policy') ?? '';
  t.match(csp, /default-src 'none'/);
  t.match(csp, /style-src 'sha256-[A-Za-z0-9+/]+=*'/, 'the one style block by hash');
  t.notMatch(csp, /unsafe-inline|script-src/, 'no inline anything, no script');
  t.match(csp, /form-action 'self'/);
  t.match(csp, /frame-ancestors 'none'/);
  t.equal(r.headers.get('x-content-type-options'), 'nosniff');
  t.equal(r.headers.get('referrer-policy'), 'no-referrer');
  t.match(r.headers.get('x-robots-tag'), /noindex/);
  t.match(r.headers.get('cache-control'), /no-store/);
  t.match(r.text, /^<!doctype html><html lang="en">/);
  t.match(r.text, /<meta name="robots" content="noindex, nofollow">/);
  t.notMatch(r.text, /<script|<img|<link|<iframe|https?:\/\/|onerror=alert\(1\)>/i, 'no script, no external resource, nothing unescaped');
  t.match(r.text, /Acme &lt;b&gt;News&lt;\/b&gt; &amp; &quot;Friends&quot;/, 'the sender name, escaped');
  t.match(r.text, /&lt;img src=x onerror=alert\(1\)&gt;/, 'a topic description, escaped');
  t.match(r.text, /<address>[^<]*<br>1 Main St<br>10115 Berlin<br>Germany<\/address>/, 'the postal address');
  t.match(r.text, new RegExp(`to <strong>${f.email.replace('+', '\\+')}</strong>`));
  t.same(checkboxes(r.text), {
    [f.topics.news]: true, [f.topics.offers]: false, [f.topics.insiders]: true, [f.topics.club]: true,
  }, 'public topics at their defaults, private ones the contact is in; the private one it is not in is hidden');
  t.match(r.text, /<fieldset><legend>Topics<\/legend>/);
  t.match(r.text, /<input type="checkbox" id="topic-0" name="topic" value="[^"]+" checked aria-describedby="topic-0-description"><label for="topic-0">News<\/label><p id="topic-0-description">What is new, monthly<\/p>/, 'each box labelled and described');
  t.match(r.text, /<legend>Unsubscribe from everything<\/legend>/);
});

t.test('saving topic choices: consent records with IP and user agent, platform events, nothing for an unchanged box', async (t) => {
  const f = await audienceFixture(app, 'Saving');
  const path = pathOf(linksOf(app, f.teamId, f.contactId, f.email).preferencesUrl);
  const shown = [f.topics.news, f.topics.offers, f.topics.insiders, f.topics.club];
  const form = (checked: string[], extraShown: string[] = []) => new URLSearchParams([
    ['action', 'save'], ...[...shown, ...extraShown].map((id): [string, string] => ['shown', id]), ...checked.map((id): [string, string] => ['topic', id]),
  ]);
  const before = (await consentRecords(app, f.teamId)).length;
  // News unchecked, Offers checked; Insiders and Club left as they were; Secret (hidden) smuggled in.
  const r = await page(base, 'POST', path, form([f.topics.offers, f.topics.insiders, f.topics.club, f.topics.secret], [f.topics.secret]), 'Browser/9');
  t.equal(r.status, 200);
  t.match(r.text, /<p class="notice" role="status">Your preferences are saved\.<\/p>/);
  t.same(checkboxes(r.text), { [f.topics.news]: false, [f.topics.offers]: true, [f.topics.insiders]: true, [f.topics.club]: true }, 'the page again, as saved');
  const trail = (await consentRecords(app, f.teamId)).slice(before);
  t.same(trail.map((x) => [x.kind, x.topic_id, x.value, x.source]).sort(), [
    ['topic', f.topics.news, 'opt_out', 'preference_page'], ['topic', f.topics.offers, 'opt_in', 'preference_page'],
  ].sort(), 'one record per changed box; a hidden topic is not the page\'s to change');
  t.match(trail[0], { contact_id: f.contactId, ip: /127\.0\.0\.1$/, user_agent: 'Browser/9' });
  const events = (await platformEvents(app, f.teamId)).slice(-2).map((e) => [e.type, e.data.topic_id]);
  t.same(events.sort(), [['svc:topic.subscribed', f.topics.offers], ['svc:topic.unsubscribed', f.topics.news]].sort());
  const api = (await call(base, 'GET', `/contacts/${f.contactId}/topics`, { token: f.token })).body.data as { id: string; subscription: string }[];
  t.same(Object.fromEntries(api.map((x) => [x.id, x.subscription])), {
    [f.topics.news]: 'opt_out', [f.topics.offers]: 'opt_in', [f.topics.insiders]: 'opt_in', [f.topics.secret]: 'opt_out', [f.topics.club]: 'opt_in',
  }, 'the API sees the same choices');

  const same = await page(base, 'POST', path, form([f.topics.offers, f.topics.insiders, f.topics.club]));
  t.equal(same.status, 200);
  t.equal((await consentRecords(app, f.teamId)).length, before + 2, 'saving the same form again writes nothing');
  const partial = await page(base, 'POST', path, new URLSearchParams([['action', 'save'], ['shown', f.topics.news], ['topic', f.topics.news]]));
  t.same(checkboxes(partial.text)[f.topics.offers], true, 'a topic the form did not show keeps its choice');
  t.same(checkboxes(partial.text)[f.topics.news], true);

  const unchecked = await page(base, 'POST', path, new URLSearchParams([['action', 'save'], ['shown', f.topics.club]]));
  t.notOk(f.topics.club in checkboxes(unchecked.text), 'a private topic left is no longer shown (spec: only for contacts opted in)');
  const odd = await page(base, 'POST', path, new URLSearchParams({ action: 'dance' }));
  t.equal(odd.status, 400);
  t.match(odd.text, /Nothing was changed/);
  const junk = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'x' }, body: 'a='.repeat(200_000) });
  t.equal(junk.status, 413, 'an oversized form is refused');
  t.match(await junk.text(), /Form not accepted/);
});

t.test('unsubscribe from everything, then resubscribe: both recorded, the boxes follow the global state', async (t) => {
  const f = await audienceFixture(app, 'Everything');
  const path = pathOf(linksOf(app, f.teamId, f.contactId, f.email).preferencesUrl);
  const off = await page(base, 'POST', path, new URLSearchParams({ action: 'unsubscribe_all' }), 'Browser/1');
  t.equal(off.status, 200);
  t.match(off.text, /You are unsubscribed from everything\./);
  t.match(off.text, /<button type="submit">Resubscribe<\/button>/);
  t.match(off.text, /<fieldset disabled><legend>Topics<\/legend>/, 'topics shown but not editable while unsubscribed');
  t.same(Object.values(checkboxes(off.text)), [false, false, false, false], 'a global unsubscribe wins over every topic');
  t.equal((await call(base, 'GET', `/contacts/${f.contactId}`, { token: f.token })).body.unsubscribed, true);

  const on = await page(base, 'POST', path, new URLSearchParams({ action: 'resubscribe' }), 'Browser/2');
  t.equal(on.status, 200);
  t.match(on.text, /You are subscribed again/);
  t.same(checkboxes(on.text), { [f.topics.news]: true, [f.topics.offers]: false, [f.topics.insiders]: true, [f.topics.club]: true }, 'the own choices are back');
  t.equal((await call(base, 'GET', `/contacts/${f.contactId}`, { token: f.token })).body.unsubscribed, false);
  const trail = (await consentRecords(app, f.teamId)).filter((x) => x.kind === 'subscription').map((x) => [x.value, x.source, x.user_agent]);
  t.same(trail, [['subscribed', 'api', 'svc-tests/1.0'], ['unsubscribed', 'preference_page', 'Browser/1'], ['subscribed', 'preference_page', 'Browser/2']]);

  const never = await call(base, 'POST', '/contacts', { token: f.token, body: { email: 'never@example.com', subscription_status: 'never_subscribed' } });
  t.equal(never.status, 201, JSON.stringify(never.body));
  const neverPage = await page(base, 'GET', pathOf(linksOf(app, f.teamId, never.body.id, 'never@example.com').preferencesUrl));
  t.match(neverPage.text, /You have not subscribed to email from Acme News/);
  t.match(neverPage.text, /<button type="submit">Subscribe<\/button>/);
});

t.test('a choice on the page that brings the contact into a segment writes svc:segment.entered', async (t) => {
  const f = await audienceFixture(app, 'Entering');
  const seg = await call(base, 'POST', '/segments', {
    token: f.token, body: { name: 'Offer takers', filter: { all: [{ topic: f.topics.offers, subscription: 'opt_in' }] } },
  });
  t.equal(seg.status, 201);
  const entered = async () => (await platformEvents(app, f.teamId)).filter((e) => e.type === 'svc:segment.entered').map((e) => e.data);
  t.same(await entered(), [], 'not in yet: Offers defaults to out');
  const path = pathOf(linksOf(app, f.teamId, f.contactId, f.email).preferencesUrl);
  const r = await page(base, 'POST', path, new URLSearchParams([['action', 'save'], ['shown', f.topics.offers], ['topic', f.topics.offers]]));
  t.equal(r.status, 200);
  t.same(await entered(), [{ contact_id: f.contactId, segment_id: seg.body.id }]);
  await page(base, 'POST', path, new URLSearchParams([['action', 'unsubscribe_all']]));
  await page(base, 'POST', path, new URLSearchParams([['action', 'resubscribe']]));
  t.equal((await entered()).length, 2, 'out with the global unsubscribe, in again on resubscribe');
});
