import t, { type Test } from 'tap';
import { simpleParser } from 'mailparser';
import { composeMessage } from '../../mta/outbound/compose.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { ssrfRefusedUrls, ssrfZone } from '../helpers/faults.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

// POST /emails against hostile input: CR/LF in every header-bearing field, protected-header
// overrides, and address-parser tricks that try to add recipients. A refusal is a clear 4xx and
// leaves nothing queued; an acceptance has exactly one recipient per address string, in the
// stored record, in the envelope, and in the headers of the message as it would be sent.
const dns = await mailZone();
const app = await startTestAppliance({ env: { SVC_DNS_SERVERS: dns.address, SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
const fileServer = await startWebhookReceiver();
t.teardown(async () => { await app.stop(); await dns.stop(); await fileServer.stop(); });
for (const [name, records] of Object.entries(ssrfZone)) dns.set(name, records);
dns.set('servfail.ssrf.test', 'SERVFAIL');
const team = await app.newTeam('Hostile');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
const db = app.appliance.services.database.db;
const good = { from: 'Acme <hello@sender.net>', to: 'ann@inbox-one.net', subject: 'Hi', text: 'Hello' };
const send = (body: unknown, path = '/emails') => call(app.baseUrl, 'POST', path, { token: team.token, body });
const queued = async () => Number((await db.selectFrom('emails').select((e) => e.fn.countAll().as('n')).where('team_id', '=', team.teamId).executeTakeFirstOrThrow()).n);

/** Sends `body` (or a batch of it) and checks it is refused 4xx with a message and nothing is stored. */
async function refused(t: Test, what: string, body: unknown, path = '/emails'): Promise<void> {
  const before = await queued();
  const r = await send(body, path);
  t.ok(r.status >= 400 && r.status < 500, `${what}: refused (${r.status} ${r.body?.name})`);
  t.ok(['validation_error', 'invalid_attachment', 'missing_required_field'].includes(r.body?.name), `${what}: ${JSON.stringify(r.body)}`);
  t.ok(typeof r.body?.message === 'string' && r.body.message.length > 10, `${what}: a message says why`);
  t.equal(await queued(), before, `${what}: nothing queued`);
}

const breaks = ['\r\n', '\n', '\r', '\0', '\r\n ', '\r\nBcc: evil@inbox-two.net'];
const injected = (text: string, brk: string) => `${text}${brk}Bcc: evil@inbox-two.net`;

t.test('CR, LF and NUL in every header-bearing field are refused; nothing is queued', async (t) => {
  for (const brk of breaks) {
    const label = JSON.stringify(brk);
    const cases: [string, Record<string, unknown>][] = [
      ['subject', { ...good, subject: injected('Hi', brk) }],
      ['from name', { ...good, from: `"Acme${brk}Bcc: evil@inbox-two.net" <hello@sender.net>` }],
      ['from name, unquoted', { ...good, from: `Acme${brk}X: y <hello@sender.net>` }],
      ['to', { ...good, to: injected('ann@inbox-one.net', brk) }],
      ['to name', { ...good, to: [`"Ann${brk}Bcc: evil@inbox-two.net" <ann@inbox-one.net>`] }],
      ['cc', { ...good, cc: [injected('bob@inbox-two.net', brk)] }],
      ['bcc', { ...good, bcc: injected('bob@inbox-two.net', brk) }],
      ['reply_to', { ...good, reply_to: injected('help@sender.net', brk) }],
      ['reply_to in an array', { ...good, reply_to: ['help@sender.net', injected('x@sender.net', brk)] }],
      ['header value', { ...good, headers: { 'X-Ref': injected('abc', brk) } }],
      ['header name', { ...good, headers: { [`X-Ref${brk}Bcc`]: 'evil@inbox-two.net' } }],
      ['Reply-To header value', { ...good, headers: { 'Reply-To': injected('help@sender.net', brk) } }],
      ['List-Unsubscribe header value', { ...good, headers: { 'List-Unsubscribe': injected('<https://sender.net/u>', brk) } }],
      ['tag name', { ...good, tags: [{ name: injected('cat', brk), value: 'v' }] }],
      ['tag value', { ...good, tags: { category: injected('v', brk) } }],
      ['attachment filename', { ...good, attachments: [{ content: 'aGk=', filename: injected('a.txt', brk) }] }],
      ['attachment content_type', { ...good, attachments: [{ content: 'aGk=', filename: 'a.txt', content_type: injected('text/plain', brk) }] }],
      ['attachment content_id', { ...good, attachments: [{ content: 'aGk=', filename: 'a.png', content_id: injected('logo', brk) }] }],
    ];
    for (const [field, body] of cases) await refused(t, `${field} with ${label}`, body);
    await refused(t, `batch: subject with ${label} in the second item`, [good, { ...good, subject: injected('Hi', brk) }], '/emails/batch');
  }
});

t.test('header names that are not a single token are refused', async (t) => {
  for (const name of ['X Ref', 'X-Ref:', 'X-Ref: x', '', 'X-\u00e9', 'Bcc ', ' Bcc', 'X-Ref\t']) {
    await refused(t, `header name ${JSON.stringify(name)}`, { ...good, headers: { [name]: 'v' } });
  }
});

t.test('protected headers cannot be overridden, whatever their case', async (t) => {
  const protectedNames = ['From', 'To', 'Cc', 'Bcc', 'Subject', 'Date', 'Message-ID', 'Return-Path', 'MIME-Version', 'Content-Type',
    'Content-Transfer-Encoding', 'DKIM-Signature'];
  for (const name of protectedNames) {
    for (const spelled of [name, name.toLowerCase(), name.toUpperCase()]) {
      await refused(t, `header ${spelled}`, { ...good, headers: { [spelled]: spelled.toLowerCase() === 'bcc' ? 'evil@inbox-two.net' : 'x' } });
    }
  }
  await refused(t, 'reply_to and a Reply-To header together', { ...good, reply_to: 'a@sender.net', headers: { 'reply-to': 'b@sender.net' } });
});

// Each trick is one address string. Accepted or refused, it never becomes two recipients.
const tricks = [
  'ann@inbox-one.net, bob@inbox-two.net',
  'ann@inbox-one.net; bob@inbox-two.net',
  'ann@inbox-one.net,,bob@inbox-two.net',
  '<ann@inbox-one.net>, <bob@inbox-two.net>',
  '"ann@inbox-one.net, bob@inbox-two.net"',
  '"ann@inbox-one.net, bob@inbox-two.net" <cat@inbox-one.net>',
  '<ann@inbox-one.net>bob@inbox-two.net',
  'ann@inbox-one.net <bob@inbox-two.net>',
  'ann@inbox-one.net bob@inbox-two.net',
  'ann@inbox-one.net\tbob@inbox-two.net',
  'ann@inbox-one.net <bob@inbox-two.net> <cat@inbox-one.net>',
  'friends: ann@inbox-one.net, bob@inbox-two.net;',
  'friends: ann@inbox-one.net;',
  'undisclosed-recipients:;',
  '=?utf-8?q?ann@inbox-one.net=2C_bob@inbox-two.net?= <cat@inbox-one.net>',
  `=?utf-8?b?${Buffer.from('ann@inbox-one.net, bob@inbox-two.net').toString('base64')}?=`,
  `=?utf-8?b?${Buffer.from('Ann <ann@inbox-one.net>, bob@inbox-two.net').toString('base64')}?= <cat@inbox-one.net>`,
  '"Ann\\" <bob@inbox-two.net>, x" <ann@inbox-one.net>',
  'Ann (bob@inbox-two.net, cat@inbox-one.net) <ann@inbox-one.net>',
  '@inbox-two.net:ann@inbox-one.net',
  'ann%inbox-two.net@inbox-one.net',
  '"bob@inbox-two.net"@inbox-one.net',
  'ann@inbox-one.net@inbox-two.net',
  'ann@inbox-one.net\u2028bob@inbox-two.net',
  'ann@inbox-one.net\u0085bob@inbox-two.net',
  'ann@inbox-one.net\u000bbob@inbox-two.net',
  'ann@[127.0.0.1]',
];

/** JSON, with every non-ASCII character escaped (a raw U+2028 would break a TAP line). */
const show = (text: string) => JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The addresses of one header of the message as svc would send it. */
async function composedAddresses(emailId: string): Promise<{ to: string[]; cc: string[]; replyTo: string[]; bcc: string[] }> {
  const row = await db.selectFrom('emails').selectAll().where('id', '=', emailId).executeTakeFirstOrThrow();
  const parsed = await simpleParser(await composeMessage(row, []));
  const list = (v: typeof parsed.to) => (v ? (Array.isArray(v) ? v : [v]).flatMap((a) => a.value.map((x) => (x.address ?? '').toLowerCase())) : []);
  return { to: list(parsed.to), cc: list(parsed.cc), replyTo: list(parsed.replyTo), bcc: list(parsed.bcc) };
}

t.test('address-parser tricks never add a recipient', async (t) => {
  const outcomes: string[] = [];
  for (const trick of tricks) {
    for (const field of ['to', 'cc', 'bcc', 'reply_to'] as const) {
      // The other fields keep a `to` no trick names, so a recipient the trick adds cannot hide as a duplicate.
      const body = field === 'to' ? { ...good, to: trick } : { ...good, to: 'dan@inbox-two.net', [field]: trick };
      const r = await send(body);
      const label = `${field}: ${show(trick)}`;
      if (r.status !== 200) {
        t.equal(r.status, 422, label);
        t.equal(r.body.name, 'validation_error', label);
        if (field === 'to') outcomes.push(`refused   ${show(trick)}`);
        continue;
      }
      const recipients = await db.selectFrom('email_recipients').select(['address', 'kind']).where('email_id', '=', r.body.id).execute();
      const stored = (await call(app.baseUrl, 'GET', `/emails/${r.body.id}`, { token: team.token })).body;
      const composed = await composedAddresses(r.body.id);
      const expected = field === 'reply_to' ? 1 : 2; // dan plus the one the trick names
      t.equal(recipients.length, field === 'to' ? 1 : expected, `${label}: envelope recipients`);
      if (field === 'to') {
        t.equal(stored.to.length, 1, `${label}: one address in the record`);
        t.equal(composed.to.length, 1, `${label}: one address in the To header (${composed.to.join(', ')})`);
        t.equal(composed.to[0], recipients[0]!.address.toLowerCase(), `${label}: the header names the envelope recipient`);
        outcomes.push(`accepted  ${show(trick)} -> ${recipients[0]!.address}`);
      }
      if (field === 'cc') t.equal(composed.cc.length, 1, `${label}: one address in the Cc header`);
      if (field === 'bcc') t.same(composed.bcc, [], `${label}: no Bcc header`);
      if (field === 'reply_to') t.equal(composed.replyTo.length, 1, `${label}: one address in the Reply-To header`);
    }
  }
  for (const line of outcomes) t.comment(line);
});

t.test('a comma list in one string is refused with a message naming the array form', async (t) => {
  const r = await send({ ...good, to: 'ann@inbox-one.net, bob@inbox-two.net' });
  t.equal(r.status, 422);
  t.match(r.body.message, /array/);
  const ok = await send({ ...good, to: ['ann@inbox-one.net', 'bob@inbox-two.net'] });
  t.equal(ok.status, 200, 'an array of addresses is the way to name several');
});

t.test('SSRF through attachment `path`: every unroutable form is 422 invalid_attachment and never fetched', async (t) => {
  const port = new URL(fileServer.url).port;
  // The same loopback forms aimed at a live server on this machine: a request reaching it would show.
  const live = ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '0x7f000001', '2130706433', '0177.0.0.1', '127.1', 'loop.ssrf.test', 'alias.ssrf.test']
    .map((host) => `http://${host}:${port}/secret.pdf`);
  for (const path of [...ssrfRefusedUrls, ...live]) {
    const before = await queued();
    const r = await send({ ...good, attachments: [{ path, filename: 'a.pdf' }] });
    t.equal(r.status, 422, path);
    t.equal(r.body.name, 'invalid_attachment', `${path}: ${r.body.message}`);
    t.equal(await queued(), before, `${path}: nothing queued`);
  }
  t.equal(fileServer.requests.length, 0, 'nothing was fetched');
});
