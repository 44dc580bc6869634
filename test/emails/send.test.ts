import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { eventsOf, mailZone } from '../helpers/email-fixtures.js';

// POST /emails: the durable accept, the stored record, and the pre-send rules 1-6.
const dns = await mailZone();
const app = await startTestAppliance({
  env: {
    SVC_DNS_SERVERS: dns.address, SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000',
    SVC_REGIONS: JSON.stringify({ 'eu-west-1': { sandbox: true } }),
  },
});
t.teardown(async () => { await app.stop(); await dns.stop(); });
const team = await app.newTeam('Sender');
const domains = fakeSendingDomains(app, dns);
domains.add({ teamId: team.teamId, name: 'sender.net' });
dns.set('sender.net', [{ type: 'MX', exchange: 'mx.inbox-one.net', priority: 10 }]);
domains.add({ teamId: team.teamId, name: 'sandboxed.net', region: 'eu-west-1' });
const base = app.baseUrl;
const send = (body: unknown, headers: Record<string, string> = {}) => call(base, 'POST', '/emails', { token: team.token, body, headers });
const good = { from: 'Acme <hello@sender.net>', to: 'ann@inbox-one.net', subject: 'Hi', html: '<p>Hello</p>' };

t.test('a send is recorded and retrievable; the answer carries its id', async (t) => {
  const r = await send({ ...good, cc: ['bob@inbox-two.net'], bcc: 'cat@inbox-one.net', reply_to: 'help@sender.net', text: 'Hello', tags: { category: 'welcome' }, headers: { 'X-Entity-Ref-ID': 'abc' } });
  t.equal(r.status, 200);
  t.match(r.body.id, /^[0-9a-f-]{36}$/);
  t.same(Object.keys(r.body), ['id']);
  const got = await call(base, 'GET', `/emails/${r.body.id}`, { token: team.token });
  t.equal(got.status, 200);
  t.match(got.body, {
    object: 'email', id: r.body.id, from: 'Acme <hello@sender.net>', to: ['ann@inbox-one.net'], cc: ['bob@inbox-two.net'],
    bcc: ['cat@inbox-one.net'], reply_to: ['help@sender.net'], subject: 'Hi', html: '<p>Hello</p>', text: 'Hello',
    scheduled_at: null, last_event: 'queued', tags: [{ name: 'category', value: 'welcome' }],
  });
  t.match(got.body.message_id, new RegExp(`^<${r.body.id}@sender\\.net>$`));
  const listed = await call(base, 'GET', '/emails?limit=5', { token: team.token });
  t.equal(listed.body.object, 'list');
  const item = listed.body.data.find((e: { id: string }) => e.id === r.body.id);
  t.ok(item);
  t.notOk('html' in item || 'text' in item || 'tags' in item, 'list items carry no bodies or tags');
});

t.test('the request log records the email id', async (t) => {
  const r = await send(good);
  await app.appliance.services.api.logWriter.flush();
  const logs = await call(base, 'GET', `/logs?search=${encodeURIComponent('/emails')}`, { token: team.token });
  const row = logs.body.data.find((l: { email_id: string | null }) => l.email_id === r.body.id);
  t.ok(row, 'a log line names the new email');
});

t.test('rule 1: the from domain must be verified on the team (403)', async (t) => {
  const r = await send({ ...good, from: 'x@unknown-domain.net' });
  t.equal(r.status, 403);
  t.equal(r.body.name, 'validation_error');
  const other = await app.newTeam('Other');
  const r2 = await call(base, 'POST', '/emails', { token: other.token, body: good });
  t.equal(r2.status, 403, "another team's verified domain does not count");
});

t.test('a key pinned to a domain sends only from it', async (t) => {
  const emails = app.appliance.services.api.sending.emails;
  await t.rejects(emails.send({ teamId: team.teamId, apiKeyId: null, domainId: crypto.randomUUID() }, good), { statusCode: 403, errorName: 'validation_error' } as never);
  const pinned = domains.all().find((d) => d.name === 'sender.net')!;
  const ok = await emails.send({ teamId: team.teamId, apiKeyId: null, domainId: pinned.id }, good);
  t.match(ok.body.id, /^[0-9a-f-]{36}$/);
});

t.test('rule 2: more than 50 recipients across to, cc, bcc is refused', async (t) => {
  const many = Array.from({ length: 30 }, (_, i) => `p${i}@inbox-one.net`);
  const r = await send({ ...good, to: many, cc: many.slice(0, 21).map((a) => a.replace('one', 'two')) });
  t.equal(r.status, 422);
  t.equal(r.body.name, 'validation_error');
  const fifty = await send({ ...good, to: many, cc: many.slice(0, 20).map((a) => a.replace('one', 'two')) });
  t.equal(fifty.status, 200, '50 is allowed');
});

t.test('rule 3 and required fields: missing_required_field', async (t) => {
  for (const [field, body] of [
    ['html', { from: good.from, to: good.to, subject: 'x' }],
    ['from', { to: good.to, subject: 'x', text: 'x' }],
    ['to', { from: good.from, subject: 'x', text: 'x' }],
    ['subject', { from: good.from, to: good.to, text: 'x' }],
  ] as const) {
    const r = await send(body);
    t.equal(r.status, 422, field);
    t.equal(r.body.name, 'missing_required_field', field);
    t.match(r.body.errors, [{ path: field }]);
  }
});

t.test('rule 4: refused recipients with reason, cause and suggestion', async (t) => {
  const cases: [string, string, string | undefined][] = [
    ['someone@example.com', 'reserved_domain', undefined],
    ['someone@host.test', 'reserved_domain', undefined],
    ['someone@gmial.com', 'typo_domain', 'gmail.com'],
    ['someone@nomail-here.net', 'no_mail', undefined],
    ['someone@no-such-domain-anywhere.net', 'no_mail', undefined],
  ];
  // An address literal never reaches the recipient rules: the address format refuses it first.
  const literal = await send({ ...good, to: 'someone@[127.0.0.1]' });
  t.equal(literal.status, 422, 'an address literal');
  t.match(literal.body, { name: 'validation_error', errors: [{ path: 'to', message: /email address needs to follow/ }] }, 'refused as a malformed address');
  t.notOk('details' in literal.body, 'with no recipient-rule details');
  for (const [to, cause, suggestion] of cases) {
    const r = await send({ ...good, to });
    t.equal(r.status, 422, to);
    t.equal(r.body.name, 'validation_error', to);
    t.equal(r.body.details?.reason, 'invalid_recipient', to);
    t.equal(r.body.details?.cause, cause, to);
    t.equal(r.body.details?.suggestion, suggestion, to);
  }
});

t.test('rule 4: with other good recipients the refused one is skipped with email.suppressed', async (t) => {
  const r = await send({ ...good, to: ['ann@inbox-one.net', 'bad@example.com'] });
  t.equal(r.status, 200);
  const events = await eventsOf(app, r.body.id);
  const suppressed = events.filter((e) => e.type === 'email.suppressed');
  t.equal(suppressed.length, 1);
  t.same(suppressed[0]!.data.to, ['bad@example.com']);
  t.match(suppressed[0]!.data.suppressed, { reason: 'invalid_recipient', type: 'Suppressed' });
  t.match(suppressed[0]!.data, { email_id: r.body.id, from: good.from, subject: 'Hi' });
});

t.test('a suppressed address becomes suppressed without leaving svc', async (t) => {
  const added = await call(base, 'POST', '/suppressions', { token: team.token, body: { email: 'gone@inbox-one.net' } });
  t.equal(added.status, 201);
  const r = await send({ ...good, to: 'Gone@inbox-one.net' });
  t.equal(r.status, 200);
  const got = await call(base, 'GET', `/emails/${r.body.id}`, { token: team.token });
  t.equal(got.body.last_event, 'suppressed');
  const events = await eventsOf(app, r.body.id);
  t.match(events.map((e) => e.type), ['email.suppressed']);
  t.match(events[0]!.data.suppressed, { reason: 'manual', type: 'OnAccountSuppressionList' });
});

t.test('rule 5: the same message without unsubscribe is refused after 500 people in a day', async (t) => {
  const team5 = await app.newTeam('Bulk');
  domains.add({ teamId: team5.teamId, name: 'bulk-sender.net' });
  const fifty = Array.from({ length: 50 }, (_, i) => `reader${i}@inbox-two.net`);
  const body = { from: 'news@bulk-sender.net', to: fifty, subject: 'Big news', html: '<p>Same for all</p>' };
  for (let i = 0; i < 10; i++) {
    const r = await call(base, 'POST', '/emails', { token: team5.token, body });
    t.equal(r.status, 200, `send ${i + 1} passes (the 10th reaches 500 and warns)`);
  }
  const refused = await call(base, 'POST', '/emails', { token: team5.token, body });
  t.equal(refused.status, 422);
  t.equal(refused.body.name, 'validation_error');
  t.equal(refused.body.details.reason, 'bulk_requires_unsubscribe');
  t.type(refused.body.details.docs_url, 'string');
  const withLink = await call(base, 'POST', '/emails', { token: team5.token, body: { ...body, html: '<p>Same for all</p><a href="https://bulk-sender.net/unsubscribe">Unsubscribe</a>' } });
  t.equal(withLink.status, 200, 'an unsubscribe link passes');
  const personal = await call(base, 'POST', '/emails', { token: team5.token, body: { ...body, to: 'one@inbox-two.net', html: '<p>Your receipt #1</p>' } });
  t.equal(personal.status, 200, 'other content is not counted');
});

t.test('rule 6: a sandboxed region sends only to the simulator and verified domains', async (t) => {
  const from = 'hi@sandboxed.net';
  const refused = await send({ ...good, from });
  t.equal(refused.status, 403);
  t.equal(refused.body.name, 'validation_error');
  t.same(refused.body.details, { recipient: 'ann@inbox-one.net', region: 'eu-west-1', allowed: ['verified_identity', 'verified_domain', 'simulator'] });
  t.equal((await send({ ...good, from, to: 'delivered@simulator.svc.invalid' })).status, 200, 'the simulator');
  t.equal((await send({ ...good, from, to: 'someone@sender.net' })).status, 200, 'a verified domain');
});

t.test('header override, CRLF and header injection are refused', async (t) => {
  for (const headers of [{ From: 'evil@x.net' }, { 'message-id': '<x@y>' }, { 'Return-Path': 'a@b.net' }, { Bcc: 'x@inbox-one.net' }]) {
    const r = await send({ ...good, headers });
    t.equal(r.status, 422, JSON.stringify(headers));
    t.equal(r.body.name, 'validation_error');
  }
  const crlfValue = await send({ ...good, headers: { 'X-Note': 'ok\r\nBcc: victim@inbox-one.net' } });
  t.equal(crlfValue.status, 422);
  const badName = await send({ ...good, headers: { 'X Bad:Name': 'v' } });
  t.equal(badName.status, 422);
  const crlfSubject = await send({ ...good, subject: 'Hi\r\nBcc: victim@inbox-one.net' });
  t.equal(crlfSubject.status, 422);
  const crlfTo = await send({ ...good, to: 'ann@inbox-one.net\r\nBcc: victim@inbox-one.net' });
  t.equal(crlfTo.status, 422);
  const longSubject = await send({ ...good, subject: 'é'.repeat(500) });
  t.equal(longSubject.status, 422, 'over 998 bytes of UTF-8');
});

t.test('tags and attachments are checked', async (t) => {
  const badTag = await send({ ...good, tags: [{ name: 'has space', value: 'x' }] });
  t.equal(badTag.status, 422);
  t.equal(badTag.body.name, 'validation_error');
  const both = await send({ ...good, attachments: [{ content: 'aGk=', path: 'https://x.net/a.pdf', filename: 'a.pdf' }] });
  t.equal(both.status, 422);
  t.equal(both.body.name, 'invalid_attachment');
  const neither = await send({ ...good, attachments: [{ filename: 'a.pdf' }] });
  t.equal(neither.body.name, 'invalid_attachment');
  const ok = await send({ ...good, attachments: [{ content: Buffer.from('hello').toString('base64'), filename: 'a.txt' }] });
  t.equal(ok.status, 200);
});

t.test('an unknown template is 422; unknown fields are 400', async (t) => {
  const r = await send({ ...good, template: { id: 'welcome' } });
  t.equal(r.status, 422);
  const unknown = await send({ ...good, colour: 'red' });
  t.equal(unknown.status, 400);
  t.same(unknown.body.errors.map((e: { path: string }) => e.path), ['colour']);
});

t.test('GET /emails filters', async (t) => {
  const marker = `m${Date.now()}`;
  const a = await send({ ...good, subject: `Filter ${marker}`, tags: [{ name: 'kind', value: marker }] });
  const b = await send({ ...good, subject: `Other ${marker}`, to: 'zed@inbox-two.net' });
  const bySubject = await call(base, 'GET', `/emails?search=${encodeURIComponent(`filter ${marker}`)}`, { token: team.token });
  t.same(bySubject.body.data.map((e: { id: string }) => e.id), [a.body.id]);
  const byRecipient = await call(base, 'GET', `/emails?search=zed@inbox`, { token: team.token });
  t.ok(byRecipient.body.data.some((e: { id: string }) => e.id === b.body.id));
  const byTag = await call(base, 'GET', `/emails?tags=kind:${marker}`, { token: team.token });
  t.same(byTag.body.data.map((e: { id: string }) => e.id), [a.body.id]);
  const byStatus = await call(base, 'GET', `/emails?status=suppressed`, { token: team.token });
  t.ok(byStatus.body.data.every((e: { last_event: string }) => e.last_event === 'suppressed'));
  const byKey = await call(base, 'GET', `/emails?api_key_id=${team.keyId}&limit=100`, { token: team.token });
  t.ok(byKey.body.data.some((e: { id: string }) => e.id === a.body.id));
  const future = await call(base, 'GET', `/emails?start_date=2999-01-01T00:00:00Z`, { token: team.token });
  t.same(future.body.data, []);
  for (const qs of ['status=nope', 'api_key_id=x', 'start_date=2026-01-01', 'end_date=2020-01-01T00:00:00Z&start_date=2021-01-01T00:00:00Z', 'search=', 'tags=a%20b']) {
    const r = await call(base, 'GET', `/emails?${qs}`, { token: team.token });
    t.equal(r.status, 422, qs);
    t.equal(r.body.name, 'invalid_parameter', qs);
  }
  const other = await app.newTeam('Nosy');
  const hidden = await call(base, 'GET', `/emails/${a.body.id}`, { token: other.token });
  t.equal(hidden.status, 404, "another team's email is 404");
});

t.test('a sending_access key sends but does not read', async (t) => {
  const sender = await app.newTeam('Sending only', 'sending_access');
  domains.add({ teamId: sender.teamId, name: 'only-sends.net' });
  const r = await call(base, 'POST', '/emails', { token: sender.token, body: { ...good, from: 'a@only-sends.net' } });
  t.equal(r.status, 200);
  const read = await call(base, 'GET', `/emails/${r.body.id}`, { token: sender.token });
  t.equal(read.status, 401);
  t.equal(read.body.name, 'restricted_api_key');
});
