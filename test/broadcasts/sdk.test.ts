import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { addContact, campaignTeam, drainWork, parseMessage } from '../helpers/broadcasts.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';
import { runningClock } from '../helpers/test-clock.js';

// The resend SDK, unchanged, for every broadcasts call it has; the messages a broadcast becomes,
// parsed at a fake MX: merge variables and their escaping, the footer, the List-Unsubscribe
// headers; exclusions with their reasons; email.* events and metrics by broadcast.
const dns = await mailZone();
const mx = await startFakeMx({ dns: dns.address });
// Runs in real time; the metrics check moves it to the next minute rather than waiting for it.
const clock = runningClock();
const app = await startTestAppliance({
  roles: ['api', 'outbound'], clock,
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port) },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); });
const team = await campaignTeam(app, dns, 'Broadcasting', 'news-sender.net');
const resend = new Resend(team.token, { baseUrl: app.baseUrl });
const base = app.baseUrl;
const token = team.token;

await call(base, 'POST', '/contact-properties', { token, body: { key: 'plan', type: 'string', fallback_value: 'basic' } });
const ann = await addContact(app, token, { email: 'ann@inbox-one.net', first_name: 'Ann <b>&', last_name: 'Lee', properties: { plan: 'gold' } });
await addContact(app, token, { email: 'bob@inbox-one.net' });
const messagesTo = (address: string, subject: RegExp) => mx.received.filter((m) => m.rcptTo === address && subject.test(m.raw.toString()));

t.test('create, get, list, update, send, recipients, clicked links, duplicate, remove — through the SDK', async (t) => {
  const created = await resend.broadcasts.create({
    name: 'May news', segmentId: team.segmentId, from: 'News <news@news-sender.net>', subject: 'Draft subject',
    html: '<p>Hi {{{FIRST_NAME|friend}}}, you are on {{{PLAN}}}.</p>', text: 'Hi {{{FIRST_NAME|friend}}}, you are on {{{PLAN}}}.',
    previewText: 'What is new in May', replyTo: 'help@news-sender.net',
  });
  t.equal(created.error, null, JSON.stringify(created.error));
  const id = created.data!.id;
  const got = await resend.broadcasts.get(id);
  t.match(got.data, {
    object: 'broadcast', id, name: 'May news', segment_id: team.segmentId, audience_id: team.segmentId, status: 'draft',
    from: 'News <news@news-sender.net>', subject: 'Draft subject', reply_to: ['help@news-sender.net'], preview_text: 'What is new in May',
    scheduled_at: null, sent_at: null, created_at: /^\d{4}-/,
  });
  const updated = await resend.broadcasts.update(id, { subject: 'News for {{{FIRST_NAME|you}}}' });
  t.same(updated.data, { id });
  const list = await resend.broadcasts.list({ limit: 10 });
  t.match(list.data, { object: 'list', has_more: false });
  t.same(list.data!.data.map((b) => [b.id, b.status]), [[id, 'draft']]);

  const sent = await resend.broadcasts.send(id);
  t.equal(sent.error, null, JSON.stringify(sent.error));
  t.same(sent.data, { id });
  t.equal((await resend.broadcasts.get(id)).data?.status, 'queued');
  await drainWork(app);
  const done = (await resend.broadcasts.get(id)).data!;
  t.equal(done.status, 'sent');
  t.match(done.sent_at, /^\d{4}-/);
  t.equal((await resend.broadcasts.update(id, { name: 'late' })).error?.name, 'validation_error', 'only a draft can be updated');
  t.equal((await resend.broadcasts.remove(id)).error?.name, 'validation_error', 'only a draft can be deleted');

  const recipients = await resend.broadcasts.recipients(id, { type: 'sent' });
  t.equal(recipients.error, null, JSON.stringify(recipients.error));
  t.same(recipients.data!.data.map((r) => r.email).sort(), ['ann@inbox-one.net', 'bob@inbox-one.net']);
  t.equal(recipients.data!.data.find((r) => r.email === 'ann@inbox-one.net')?.contact_id, ann);
  await waitFor('both messages at the MX', async () => messagesTo('ann@inbox-one.net', /News for/).length + messagesTo('bob@inbox-one.net', /News for/).length === 2);
  const delivered = await waitFor('both delivered', async () => {
    const r = await resend.broadcasts.recipients(id, { type: 'delivered' });
    return r.data?.data.length === 2 ? r : undefined;
  });
  t.equal(delivered.data!.data.length, 2);
  const clicked = await resend.broadcasts.clickedLinks(id);
  t.same(clicked.data, { object: 'list', has_more: false, data: [] }, 'no clicks recorded');

  const copy = await resend.broadcasts.duplicate(id);
  t.equal(copy.error, null, JSON.stringify(copy.error));
  t.match((await resend.broadcasts.get(copy.data!.id)).data, { status: 'draft', subject: 'News for {{{FIRST_NAME|you}}}', sent_at: null });
  const removed = await resend.broadcasts.remove(copy.data!.id);
  t.same(removed.data, { object: 'broadcast', id: copy.data!.id, deleted: true });
  t.equal((await resend.broadcasts.get(copy.data!.id)).error?.name, 'not_found');
});

t.test('created with send and a time: scheduled, then canceled; cancel of a draft is refused', async (t) => {
  const created = await resend.broadcasts.create({
    name: 'Later', segmentId: team.segmentId, from: 'news@news-sender.net', subject: 'Later', text: 'Later {{{UNSUBSCRIBE_URL}}}',
    previewText: 'later', send: true, scheduledAt: 'in 2 hours',
  });
  t.equal(created.error, null, JSON.stringify(created.error));
  const b = (await resend.broadcasts.get(created.data!.id)).data!;
  t.equal(b.status, 'scheduled');
  t.ok(Math.abs(Date.parse(b.scheduled_at!) - (Date.now() + 2 * 3600_000)) < 60_000, 'two hours ahead');
  const canceled = await resend.broadcasts.cancel(b.id);
  t.same(canceled.data, { object: 'broadcast', id: b.id });
  t.equal((await resend.broadcasts.get(b.id)).data?.status, 'canceled');
  await drainWork(app);
  const draft = (await resend.broadcasts.create({ segmentId: team.segmentId, from: 'news@news-sender.net', subject: 's', text: 't' })).data!;
  t.equal((await resend.broadcasts.cancel(draft.id)).error?.name, 'validation_error');
  t.equal((await resend.broadcasts.send(draft.id, { scheduledAt: 'yesterday' })).error?.name, 'validation_error', 'a bad time is refused');
});

t.test('the message at the MX: merge values escaped in html, literal in text and subject; footer; List-Unsubscribe', async (t) => {
  const annMail = await parseMessage(messagesTo('ann@inbox-one.net', /News for/)[0]!.raw);
  t.equal(annMail.subject, 'News for Ann <b>&', 'literal in the subject');
  t.match(annMail.html, /<p>Hi Ann &lt;b&gt;&amp;, you are on gold\.<\/p>/, 'escaped in html');
  t.match(annMail.text, /Hi Ann <b>&, you are on gold\./, 'literal in text');
  t.match(annMail.html, /<div style="display:none[^"]*">What is new in May<\/div>/, 'the preview text as the hidden first line');
  const header = (mail: typeof annMail, key: string) => mail.headerLines.find((h) => h.key === key)?.line.replace(/^[^:]+:\s*/, '');
  const unsubscribe = header(annMail, 'list-unsubscribe')!;
  t.match(unsubscribe, new RegExp(`^<${base}/unsubscribe/v1\\.[\\w.-]+>$`));
  t.equal(header(annMail, 'list-unsubscribe-post'), 'List-Unsubscribe=One-Click', 'RFC 8058');
  const url = unsubscribe.slice(1, -1);
  t.ok((annMail.html as string).includes(`<a href="${url}">Unsubscribe</a>`), 'the footer links the same unsubscribe URL');
  t.match(annMail.html, /1 Main St, Berlin, 10115, DE/, 'and shows the postal address');
  t.match(annMail.text, new RegExp(`Unsubscribe: ${url.replaceAll('.', '\\.')}\\n1 Main St, Berlin, 10115, DE`));
  t.same(annMail.replyTo?.value.map((v) => v.address), ['help@news-sender.net']);

  const bobMail = await parseMessage(messagesTo('bob@inbox-one.net', /News for/)[0]!.raw);
  t.equal(bobMail.subject, 'News for you', 'the inline default');
  t.match(bobMail.text, /Hi friend, you are on basic\./, 'inline default, then the property\'s fallback_value');
  t.not(header(bobMail, 'list-unsubscribe'), unsubscribe, 'each recipient has its own link');

  const own = await resend.broadcasts.create({
    name: 'Own link', segmentId: team.segmentId, from: 'news@news-sender.net', subject: 'Own link', previewText: 'p',
    html: '<p>Bye? <a href="{{{UNSUBSCRIBE_URL}}}">leave</a> or <a href="{{{PREFERENCES_URL}}}">choose</a></p>', send: true,
  });
  t.equal(own.error, null, JSON.stringify(own.error));
  await drainWork(app);
  const raw = await waitFor('the own-link message', async () => messagesTo('ann@inbox-one.net', /Own link/)[0]);
  const mail = await parseMessage(raw.raw);
  const link = header(mail, 'list-unsubscribe')!.slice(1, -1);
  t.ok((mail.html as string).includes(`<a href="${link}">leave</a>`), 'UNSUBSCRIBE_URL is the one-click link of the header');
  t.ok((mail.html as string).includes(`<a href="${link.replace('/unsubscribe/', '/preferences/')}">choose</a>`), 'PREFERENCES_URL');
  t.notMatch(mail.html, /1 Main St/, 'no footer when the body has its own link');
  const page = await fetch(link, { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'mp/1' } });
  t.equal(page.status, 200, 'the one-click link works');
});

t.test('exclusions with their reasons; email.* events and metrics carry the broadcast id', async (t) => {
  const topic = (await call(base, 'POST', '/topics', { token, body: { name: 'Weekly', default_subscription: 'opt_in' } })).body.id as string;
  const carl = await addContact(app, token, { email: 'carl@inbox-one.net', topics: [{ id: topic, subscription: 'opt_out' }] });
  await addContact(app, token, { email: 'dana@inbox-one.net', unsubscribed: true });
  await addContact(app, token, { email: 'eve@inbox-one.net' });
  await call(base, 'POST', '/suppressions', { token, body: { email: 'eve@inbox-one.net' } });
  const made = await resend.broadcasts.create({
    name: 'Weekly 1', segmentId: team.segmentId, topicId: topic, from: 'news@news-sender.net', subject: 'Weekly', previewText: 'w',
    text: 'Weekly {{{UNSUBSCRIBE_URL}}}', send: true,
  });
  t.equal(made.error, null, JSON.stringify(made.error));
  const id = made.data!.id;
  await drainWork(app);
  const sent = (await resend.broadcasts.recipients(id, { type: 'sent' })).data!.data.map((r) => r.email).sort();
  t.same(sent, ['bob@inbox-one.net'], 'the topic\'s effective opt-ins only (Ann left by one click above)');
  const excluded = (await call(base, 'GET', `/broadcasts/${id}/recipients?type=suppressed`, { token })).body.data as { email: string; reason: string; contact_id: string }[];
  t.same(excluded.map((r) => [r.email, r.reason]).sort(), [
    ['ann@inbox-one.net', 'unsubscribed'], ['carl@inbox-one.net', 'topic_opt_out'], ['dana@inbox-one.net', 'unsubscribed'], ['eve@inbox-one.net', 'suppressed'],
  ]);
  t.equal(excluded.find((r) => r.email === 'carl@inbox-one.net')?.contact_id, carl);
  const emailIds = (await resend.broadcasts.recipients(id, { type: 'sent' })).data!.data.map((r) => (r as { email_id?: string }).email_id);
  for (const emailId of emailIds) {
    const email = (await resend.emails.get(emailId!)).data!;
    t.equal(email.topic_id, topic, 'each recipient is one ordinary email');
  }
  await waitFor('email.sent', async () => {
    const rows = await app.appliance.services.database.db.selectFrom('events').select(['type', 'data']).where('type', '=', 'email.sent').execute();
    return rows.filter((r) => JSON.parse(r.data).broadcast_id === id).length === 1;
  });
  // Metrics report completed minutes only: the minute of these sends has to pass first.
  const sentBy = async (query: string) => (await call(base, 'GET', `/emails/metrics?${query}&metrics=sent`, { token })).body.totals?.sent as number;
  clock.advance(60_000);
  await waitFor('the minute of the sends to complete in the metrics', async () => (await sentBy(`broadcast_id=${id}`)) === 1, 15_000, 200);
  t.equal(await sentBy(`broadcast_id=${id}`), 1, 'GET /emails/metrics by broadcast_id counts its one email');
  t.equal(await sentBy('broadcast_id=00000000-0000-7000-8000-000000000000'), 0, 'and nothing for another id');
});
