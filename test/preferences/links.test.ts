import t from 'tap';
import { contactLinkTokens } from '../../core/preferences/tokens.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentHashOf, consentRecords, platformEvents } from '../helpers/audience.js';
import { call } from '../helpers/http.js';
import { audienceFixture, linksOf, page, pathOf, rawHttp } from '../helpers/preferences.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

// The unsubscribe link over real HTTP: what broadcasts put in each message, the token as the only
// capability (forged, cut, altered, another team's, erased, re-addressed: one 404), a GET that
// never unsubscribes, and RFC 8058's one-click POST with its consent record and no webhook.
const receiver = await startWebhookReceiver();
t.teardown(() => receiver.stop());
const app = await startTestAppliance({ env: { SVC_WEBHOOKS_ALLOW_PRIVATE: 'true' } });
t.teardown(() => app.stop());
const base = app.baseUrl;
const contactOf = async (token: string, id: string) => (await call(base, 'GET', `/contacts/${id}`, { token })).body;

t.test('links for a recipient: both URLs on the link base, one token, the List-Unsubscribe headers', async (t) => {
  const f = await audienceFixture(app, 'Links');
  const links = linksOf(app, f.teamId, f.contactId, f.email);
  t.match(links.unsubscribeUrl, new RegExp(`^${base}/unsubscribe/v1\\.[\\w-]+\\.[\\w-]+\\.[\\w-]+$`));
  t.equal(links.preferencesUrl, links.unsubscribeUrl.replace('/unsubscribe/', '/preferences/'), 'one token serves both paths');
  t.ok(links.unsubscribeUrl.length - base.length < 160, `compact enough for a header (${links.unsubscribeUrl.length - base.length} characters of path)`);
  t.same(links.headers, { 'List-Unsubscribe': `<${links.unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' }, 'RFC 8058: one URI, no mailto');
  const again = linksOf(app, f.teamId, f.contactId, f.email);
  t.not(again.unsubscribeUrl, links.unsubscribeUrl, 'each mint is sealed afresh');
  for (const url of [links.unsubscribeUrl, again.unsubscribeUrl, links.preferencesUrl]) t.equal((await page(base, 'GET', pathOf(url))).status, 200, url);
  t.equal((await page(base, 'GET', `/api/v1${pathOf(links.preferencesUrl)}`)).status, 200, 'under /api/v1 too');
});

t.test('a GET (or HEAD) of the unsubscribe link asks; it never unsubscribes', async (t) => {
  const f = await audienceFixture(app, 'Scanner');
  const path = pathOf(linksOf(app, f.teamId, f.contactId, f.email).unsubscribeUrl);
  for (let i = 0; i < 3; i++) {
    const r = await page(base, 'GET', path, undefined, 'Mozilla/5.0 (link scanner)');
    t.equal(r.status, 200);
    t.match(r.text, /<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">/);
    t.match(r.text, /<button type="submit">Unsubscribe<\/button>/);
  }
  t.equal((await page(base, 'HEAD', path)).status, 200);
  t.equal((await contactOf(f.token, f.contactId)).unsubscribed, false, 'still subscribed after every prefetch');
  t.same((await consentRecords(app, f.teamId)).filter((r) => r.source === 'one_click'), [], 'no consent record');
});

t.test('RFC 8058: the one-click POST as a mailbox provider sends it unsubscribes, with its consent record', async (t) => {
  const f = await audienceFixture(app, 'One click');
  const path = pathOf(linksOf(app, f.teamId, f.contactId, f.email).unsubscribeUrl);
  const body = 'List-Unsubscribe=One-Click';
  const request = [`POST ${path} HTTP/1.1`, `Host: ${new URL(base).host}`, 'User-Agent: Mailbox-Provider-Unsubscriber/1.0',
    'Content-Type: application/x-www-form-urlencoded', `Content-Length: ${body.length}`, 'Connection: close', '', body].join('\r\n');
  const r = await rawHttp(base, request);
  t.equal(r.status, 200, r.text.slice(0, 200));
  t.match(r.text, /You will no longer receive email from Acme News/);
  t.equal((await contactOf(f.token, f.contactId)).unsubscribed, true);
  const trail = (await consentRecords(app, f.teamId)).filter((x) => x.kind === 'subscription');
  t.equal(trail.length, 2, 'the create, then the unsubscribe');
  t.match(trail[1], {
    contact_id: f.contactId, value: 'unsubscribed', source: 'one_click', ip: /127\.0\.0\.1$/,
    user_agent: 'Mailbox-Provider-Unsubscriber/1.0', email_hash: consentHashOf(app, f.email),
  });
  const repeat = await rawHttp(base, request);
  t.equal(repeat.status, 200, 'a repeat is answered the same');
  t.equal((await consentRecords(app, f.teamId)).filter((x) => x.kind === 'subscription').length, 2, 'and records nothing new');

  const g = await audienceFixture(app, 'Form data');
  const multipart = ['--b', 'Content-Disposition: form-data; name="List-Unsubscribe"', '', 'One-Click', '--b--', ''].join('\r\n');
  const form = await fetch(base + pathOf(linksOf(app, g.teamId, g.contactId, g.email).unsubscribeUrl), {
    method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b', 'user-agent': 'mp/1' }, body: multipart,
  });
  t.equal(form.status, 200, 'the multipart/form-data body RFC 8058 recommends is accepted too');
  t.equal((await contactOf(g.token, g.contactId)).unsubscribed, true);
});

t.test('the token is the only capability: anything else is the same 404', async (t) => {
  const f = await audienceFixture(app, 'Forgery');
  const other = await audienceFixture(app, 'Other team');
  const links = linksOf(app, f.teamId, f.contactId, f.email);
  const token = pathOf(links.unsubscribeUrl).split('/').pop()!;
  const [version, iv, tag, sealed] = token.split('.') as [string, string, string, string];
  const flip = (s: string) => s.slice(0, 5) + (s[5] === 'A' ? 'B' : 'A') + s.slice(6);
  const box = app.appliance.services.secretBox;
  const tokens = contactLinkTokens(box);
  const bad: Record<string, string> = {
    unknown: 'not-a-token',
    truncated: token.slice(0, -4),
    'body altered': [version, iv, tag, flip(sealed)].join('.'),
    'tag altered': [version, iv, flip(tag), sealed].join('.'),
    'tag cut to 4 bytes': [version, iv, Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url'), sealed].join('.'),
    'another team naming this contact': tokens.mint(other.teamId, f.contactId, f.email),
    'this team naming another team\'s contact': tokens.mint(f.teamId, other.contactId, other.email),
    'made for another address': tokens.mint(f.teamId, f.contactId, 'someone-else@example.com'),
    'sealed, but not a link token': box.seal(JSON.stringify({ v: 1, k: 's', e: f.contactId, a: f.teamId, x: Date.now() + 60_000 })),
    'very long': 'v1.' + 'A'.repeat(5000),
  };
  const answers = new Set<string>();
  for (const [what, forged] of Object.entries(bad)) {
    for (const [method, path] of [['GET', `/unsubscribe/${forged}`], ['POST', `/unsubscribe/${forged}`], ['GET', `/preferences/${forged}`], ['POST', `/preferences/${forged}`]] as const) {
      const r = await page(base, method, path, method === 'POST' ? new URLSearchParams({ action: 'unsubscribe_all' }) : undefined);
      t.equal(r.status, 404, `${what}: ${method} ${path.split('/')[1]}`);
      answers.add(r.text);
    }
  }
  t.equal(answers.size, 1, 'one page for every refusal: nothing tells them apart');
  t.match([...answers][0], /Link not valid/);
  t.equal((await contactOf(f.token, f.contactId)).unsubscribed, false);
  t.equal((await contactOf(other.token, other.contactId)).unsubscribed, false);
  t.equal((await page(base, 'POST', '/preferences', new URLSearchParams({ action: 'unsubscribe_all' }))).status, 404, 'a POST without a token is no route');
  t.equal((await page(base, 'POST', '/unsubscribe/')).status, 404);

  t.equal((await page(base, 'GET', pathOf(links.preferencesUrl))).status, 200, 'the genuine token still works');
  const moved = await call(base, 'PATCH', `/contacts/${f.contactId}`, { token: f.token, body: { email: 'moved@example.com' } });
  t.equal(moved.status, 200);
  t.equal((await page(base, 'GET', pathOf(links.preferencesUrl))).status, 404, 'a link sent to the old address dies when the address changes');
  const fresh = linksOf(app, f.teamId, f.contactId, 'moved@example.com');
  t.equal((await page(base, 'GET', pathOf(fresh.preferencesUrl))).status, 200, 'the new address\'s link works');
  t.equal((await call(base, 'DELETE', `/contacts/${f.contactId}`, { token: f.token })).status, 200);
  t.equal((await page(base, 'GET', pathOf(fresh.preferencesUrl))).status, 404, 'an erased contact\'s link is 404');
  t.equal((await page(base, 'POST', pathOf(fresh.unsubscribeUrl))).status, 404);
});

t.test('a broadcast\'s links name the broadcast; the name alone records nothing', async (t) => {
  const f = await audienceFixture(app, 'Named');
  const tokens = contactLinkTokens(app.appliance.services.secretBox);
  const broadcastId = '01a21134-f015-7050-868b-6f8e98d3760f';
  const named = tokens.mint(f.teamId, f.contactId, f.email, broadcastId);
  t.match(tokens.open(named), { teamId: f.teamId, contactId: f.contactId, broadcastId });
  t.equal(tokens.open(tokens.mint(f.teamId, f.contactId, f.email))?.broadcastId, undefined, 'a plain link names none');
  const box = app.appliance.services.secretBox;
  const packed = (n: number) => Buffer.alloc(n, 7).toString('base64url');
  t.equal(tokens.open(box.seal(`c2.${packed(40)}`)), undefined, 'c2 of c1\'s length');
  t.equal(tokens.open(box.seal(`c1.${packed(56)}`)), undefined, 'c1 of c2\'s length');
  t.equal((await page(base, 'GET', `/preferences/${named}`)).status, 200, 'the page opens');
  // This contact was never sent that broadcast: the unsubscribe works, and no broadcast records it.
  t.equal((await page(base, 'POST', `/unsubscribe/${named}`)).status, 200);
  t.equal((await contactOf(f.token, f.contactId)).unsubscribed, true);
  const marks = await app.appliance.services.database.db.selectFrom('broadcast_recipient_marks').selectAll().where('contact_id', '=', f.contactId).execute();
  t.same(marks, []);
});

t.test('no contact.updated webhook for an unsubscribe or a choice made through the links', async (t) => {
  const f = await audienceFixture(app, 'Webhooks');
  const hook = await call(base, 'POST', '/webhooks', { token: f.token, body: { endpoint: `${receiver.url}/contacts`, events: ['contact.updated'] } });
  t.equal(hook.status, 201, JSON.stringify(hook.body));
  const links = linksOf(app, f.teamId, f.contactId, f.email);
  t.equal((await page(base, 'POST', pathOf(links.preferencesUrl), new URLSearchParams([['action', 'save'], ['shown', f.topics.news]]))).status, 200);
  t.equal((await page(base, 'POST', pathOf(links.unsubscribeUrl), new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }))).status, 200);
  t.equal((await page(base, 'POST', pathOf(links.preferencesUrl), new URLSearchParams({ action: 'resubscribe' }))).status, 200);
  t.equal((await page(base, 'POST', pathOf(links.preferencesUrl), new URLSearchParams({ action: 'unsubscribe_all' }))).status, 200);
  // A marker the endpoint must receive: an API change of another contact, made after the others.
  const marker = await call(base, 'POST', '/contacts', { token: f.token, body: { email: 'marker@example.com' } });
  t.equal((await call(base, 'PATCH', `/contacts/${marker.body.id}`, { token: f.token, body: { first_name: 'Mark' } })).status, 200);
  await app.appliance.services.webhookDispatcher.runDue();
  const seen = await receiver.waitFor(1, '/contacts');
  t.same(seen.map((r) => JSON.parse(r.body).data.id), [marker.body.id], 'only the API change was sent');
  await app.appliance.services.webhookDispatcher.runDue();
  t.equal(receiver.at('/contacts').length, 1, 'and nothing after it');
  t.equal((await contactOf(f.token, f.contactId)).unsubscribed, true, 'while every page change did land');
  const kinds = (await platformEvents(app, f.teamId)).filter((e) => e.contact_id === f.contactId).map((e) => e.type);
  t.same(kinds, ['svc:contact.created', 'svc:topic.subscribed', 'svc:topic.unsubscribed'], 'the creation, its Club choice, the News choice');
});
