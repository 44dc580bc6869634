import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { receivedRawKey } from '../../storage/files/index.js';
import { rawSmtp } from '../helpers/raw-smtp.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';

// Mail for a receiving domain, end to end: SMTP in (nodemailer's client), the record through the
// receiving API, the raw source and attachments through signed links, and delete.
const rig = await startInboundRig();
t.teardown(() => rig.stop());
const acme = await rig.app.newTeam('Acme');
const other = await rig.app.newTeam('Other');
rig.addDomain(acme.teamId, 'acme-inbox.net');
rig.addDomain(other.teamId, 'other-inbox.net');

const boundary = 'b1_svc_test';
const multipart = rfc822({
  From: '"Ann Sender" <ann@sender.example>',
  To: 'Support <support@acme-inbox.net>, someone@else.example',
  Cc: 'cc@acme-inbox.net',
  'Reply-To': 'replies@sender.example',
  Subject: '=?UTF-8?B?w4lsw6lwaGFudCByZXBvcnQ=?=',
  'Message-ID': '<report-1@sender.example>',
  Date: 'Sun, 22 Nov 2026 08:00:00 +0000',
  'MIME-Version': '1.0',
  'Content-Type': `multipart/mixed; boundary="${boundary}"`,
}, [
  `--${boundary}`,
  'Content-Type: multipart/alternative; boundary="alt"',
  '',
  '--alt',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'Hello =C3=A9l=C3=A9phant,',
  'see attached.',
  '--alt',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p onclick="x()">Hello <b>éléphant</b> <img src="cid:logo@x"></p>',
  '--alt--',
  `--${boundary}`,
  'Content-Type: text/csv; name="numbers.csv"',
  'Content-Disposition: attachment; filename="numbers.csv"',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('a,b\n1,2\n').toString('base64'),
  `--${boundary}`,
  'Content-Type: text/html; name="page.html"',
  'Content-Disposition: attachment; filename="page.html"',
  '',
  '<script>alert(1)</script>',
  `--${boundary}--`,
  '',
].join('\n'));

t.test('accepted mail appears in the receiving API with the right fields', async (t) => {
  const sent = await rig.send({ from: 'bounce@sender.example', to: ['support@acme-inbox.net', 'cc@acme-inbox.net'] }, multipart);
  t.match(sent.response, /^250 2\.0\.0 Ok: queued as [0-9a-f-]{36}$/);
  const got = await rig.api(acme.token, 'GET', `/emails/receiving/${sent.id}`);
  t.equal(got.status, 200);
  t.match(got.body, {
    object: 'email', id: sent.id, from: 'Ann Sender <ann@sender.example>', subject: 'Éléphant report',
    to: ['support@acme-inbox.net', 'someone@else.example'], cc: ['cc@acme-inbox.net'], bcc: null, reply_to: ['replies@sender.example'],
    received_for: ['support@acme-inbox.net', 'cc@acme-inbox.net'], message_id: '<report-1@sender.example>',
  });
  t.equal(got.body.text, 'Hello éléphant,\nsee attached.', 'text exactly as decoded');
  t.equal(got.body.html, '<p onclick="x()">Hello <b>éléphant</b> <img src="cid:logo@x"></p>', 'html as decoded, never sanitised');
  t.notOk('dropped_reason' in got.body);
  t.equal(got.body.headers['message-id'], '<report-1@sender.example>');
  t.match(got.body.headers.received, /^from .* by mx\.svc-test\.net \(svc\) with E?SMTPS?( \(using [^)]+\))? id \S+; \w{3}, /, 'svc added its own trace header');
  t.match(got.body.attachments, [
    { filename: 'numbers.csv', content_type: 'text/csv', size: 8, content_disposition: 'attachment' },
    { filename: 'page.html', content_type: 'text/html', content_disposition: 'attachment' },
  ]);
  t.notOk('download_url' in got.body.attachments[0], 'parts listed inside a message carry no link');
  t.match(got.body.raw, { download_url: /^http:\/\/127\.0\.0\.1:\d+\/downloads\/received\/\S+$/, expires_at: /Z$/ });

  const raw = await fetch(got.body.raw.download_url);
  t.equal(raw.status, 200, 'the raw source needs no Authorization');
  t.equal(raw.headers.get('content-type'), 'message/rfc822');
  t.match(raw.headers.get('content-disposition'), /^attachment; filename="?[0-9a-f-]{36}\.eml"?$/);
  const source = await raw.text();
  t.match(source, /^Received: from /);
  t.ok(source.endsWith(multipart.replace(/\r?\n/g, '\r\n')) || source.includes('Subject: =?UTF-8?B?'), 'the source is what was sent, after the trace header');

  const other2 = await rig.api(other.token, 'GET', `/emails/receiving/${sent.id}`);
  t.equal(other2.status, 404, 'another team cannot see it');
});

t.test('attachments come with signed links; risky types are served as octet-stream downloads', async (t) => {
  const sent = await rig.send({ from: 'bounce@sender.example', to: ['support@acme-inbox.net'] }, multipart);
  const list = await rig.api(acme.token, 'GET', `/emails/receiving/${sent.id}/attachments`);
  t.equal(list.status, 200);
  t.equal(list.body.object, 'list');
  t.equal(list.body.data.length, 2);
  const [csv, html] = list.body.data;
  t.match(csv, { object: 'attachment', filename: 'numbers.csv', download_url: /\/downloads\/received\//, expires_at: /Z$/ });
  const expires = Date.parse(csv.expires_at) - Date.now();
  t.ok(expires > 14 * 60_000 && expires <= 15 * 60_000 + 5000, 'valid 15 minutes');

  const csvRes = await fetch(csv.download_url);
  t.equal(csvRes.status, 200);
  t.equal(csvRes.headers.get('content-type'), 'text/csv');
  t.match(csvRes.headers.get('content-disposition'), /^attachment; filename="?numbers\.csv"?$/);
  t.equal(csvRes.headers.get('x-content-type-options'), 'nosniff');
  t.equal(await csvRes.text(), 'a,b\n1,2\n');

  const htmlRes = await fetch(html.download_url);
  t.equal(htmlRes.headers.get('content-type'), 'application/octet-stream', 'text/html is never served as html');
  t.match(htmlRes.headers.get('content-disposition'), /^attachment; filename="?page\.html"?$/);
  t.equal(await htmlRes.text(), '<script>alert(1)</script>');

  const one = await rig.api(acme.token, 'GET', `/emails/receiving/${sent.id}/attachments/${csv.id}`);
  t.match(one.body, { object: 'attachment', id: csv.id, filename: 'numbers.csv', download_url: /^http/ });
  const missing = await rig.api(acme.token, 'GET', `/emails/receiving/${sent.id}/attachments/${crypto.randomUUID()}`);
  t.equal(missing.status, 404);

  // Alter a character well inside the token (the last one may only carry unused padding bits).
  const at = csv.download_url.length - 10;
  const forged = csv.download_url.slice(0, at) + (csv.download_url[at] === 'A' ? 'B' : 'A') + csv.download_url.slice(at + 1);
  t.equal((await fetch(forged)).status, 404, 'an altered token is refused');
  t.equal((await fetch(`${rig.app.baseUrl}/downloads/received/nonsense`)).status, 404);
});

t.test('delete removes message, attachments and source; 404 afterwards', async (t) => {
  const sent = await rig.send({ from: 'bounce@sender.example', to: ['support@acme-inbox.net'] }, multipart);
  const got = await rig.api(acme.token, 'GET', `/emails/receiving/${sent.id}`);
  const parts = await rig.api(acme.token, 'GET', `/emails/receiving/${sent.id}/attachments`);
  const spoolDir = join(rig.app.config.data_dir, 'spool');
  const rawPath = join(spoolDir, receivedRawKey(sent.id));
  t.ok(existsSync(rawPath), 'the raw source is on disk');
  t.equal((await rig.api(other.token, 'DELETE', `/emails/receiving/${sent.id}`)).status, 404, 'not by another team');
  const del = await rig.api(acme.token, 'DELETE', `/emails/receiving/${sent.id}`);
  t.same(del.body, { object: 'email', id: sent.id, deleted: true });
  t.equal((await rig.api(acme.token, 'GET', `/emails/receiving/${sent.id}`)).status, 404);
  t.equal((await rig.api(acme.token, 'GET', `/emails/receiving/${sent.id}/attachments`)).status, 404);
  t.equal((await rig.api(acme.token, 'DELETE', `/emails/receiving/${sent.id}`)).status, 404);
  t.notOk(existsSync(rawPath), 'the raw source is gone from disk');
  t.equal((await fetch(got.body.raw.download_url)).status, 404, 'an unexpired raw link stops working');
  t.equal((await fetch(parts.body.data[0].download_url)).status, 404, 'an unexpired attachment link stops working');
});

t.test('received and sent ids live apart: each route 404s the other kind', async (t) => {
  const sent = await rig.send({ from: 'bounce@sender.example', to: ['support@acme-inbox.net'] }, rfc822({ From: 'a@b.example', Subject: 'x' }, 'x'));
  t.equal((await rig.api(acme.token, 'GET', `/emails/${sent.id}`)).status, 404, 'a received id is 404 on /emails/{id}');
  t.equal((await rig.api(acme.token, 'GET', `/emails/receiving/${crypto.randomUUID()}`)).status, 404);
  t.equal((await rig.api(acme.token, 'GET', '/emails/receiving/not-an-id')).status, 404);
});

t.test('one transaction for two teams makes one record per team, each with its own received_for', async (t) => {
  const sent = await rig.send(
    { from: 'x@sender.example', to: ['a@acme-inbox.net', 'b@other-inbox.net', 'c@acme-inbox.net'] },
    rfc822({ From: 'x@sender.example', To: 'a@acme-inbox.net, b@other-inbox.net', Subject: 'Shared' }, 'Hi both'),
  );
  const mine = await rig.api(acme.token, 'GET', '/emails/receiving?search=Shared');
  const theirs = await rig.api(other.token, 'GET', '/emails/receiving?search=Shared');
  t.equal(mine.body.data.length, 1);
  t.equal(theirs.body.data.length, 1);
  t.same(mine.body.data[0].received_for, ['a@acme-inbox.net', 'c@acme-inbox.net']);
  t.same(theirs.body.data[0].received_for, ['b@other-inbox.net']);
  t.not(mine.body.data[0].id, theirs.body.data[0].id);
  t.ok([mine.body.data[0].id, theirs.body.data[0].id].includes(sent.id));
  const events = await rig.events('email.received');
  const forTheirs = events.filter((e) => e.data.email_id === theirs.body.data[0].id);
  t.equal(forTheirs.length, 1, 'one email.received event per record');
  t.equal(forTheirs[0]!.team_id, other.teamId);
  t.match(forTheirs[0]!.data, { subject: 'Shared', from: 'x@sender.example', received_for: ['b@other-inbox.net'], attachments: [] });
});

t.test('relaying is refused, whatever the address form', async (t) => {
  const smtp = await rawSmtp(rig.smtpPort);
  t.teardown(() => smtp.close());
  t.match(await smtp.command('EHLO client.example'), /^250[ -]/);
  t.match(await smtp.command('MAIL FROM:<x@sender.example>'), /^250 /);
  const cases: [string, RegExp][] = [
    ['<victim@elsewhere.example>', /^550 5\.7\.1 /],
    ['<victim%elsewhere.example@acme-inbox.net>', /^550 5\.7\.1 /],
    ['<elsewhere.example!victim@acme-inbox.net>', /^550 5\.7\.1 /],
    ['<@acme-inbox.net:victim@elsewhere.example>', /^550 5\.7\.1 /],
    ['<"victim@elsewhere.example"@acme-inbox.net>', /^5\d\d /],
    ['<"victim"@acme-inbox.net>', /^553 5\.1\.3 /],
    ['<victim@[127.0.0.1]>', /^5\d\d /],
    ['<victim@acme-inbox.net.elsewhere.example>', /^550 5\.7\.1 /],
    ['<postmaster@elsewhere.example>', /^550 5\.7\.1 /],
  ];
  for (const [address, expected] of cases) t.match(await smtp.command(`RCPT TO:${address}`), expected, address);
  t.match(await smtp.command('DATA'), /^503 /, 'no accepted recipient, no DATA');
  t.match(await smtp.command('RCPT TO:<ok@acme-inbox.net>'), /^250 /, 'a receiving domain is accepted');
  t.match(await smtp.command('RCPT TO:<Mixed.Case@ACME-INBOX.NET>'), /^250 /, 'domains compare case-insensitively');
  t.match(await smtp.command('AUTH PLAIN AGJvYgBwdw=='), /^50\d /, 'no AUTH: nothing to relay through');
  await smtp.command('QUIT');
});

t.test('a lookup failure at RCPT is 451, never 550', async (t) => {
  const routing = rig.app.appliance.services.receiving.routing;
  const real = routing.domains;
  routing.domains = { receivingDomain: async () => { throw new Error('SQLITE_BUSY'); } };
  t.teardown(() => { routing.domains = real; });
  const smtp = await rawSmtp(rig.smtpPort);
  t.teardown(() => smtp.close());
  await smtp.command('EHLO client.example');
  await smtp.command('MAIL FROM:<x@sender.example>');
  t.match(await smtp.command('RCPT TO:<ok@acme-inbox.net>'), /^451 4\.3\.0 /);
});

t.test('STARTTLS is offered with a self-signed certificate made on first start', async (t) => {
  const smtp = await rawSmtp(rig.smtpPort);
  t.teardown(() => smtp.close());
  t.match(smtp.greeting, /^220 mx\.svc-test\.net ESMTP svc/);
  const ehlo = await smtp.command('EHLO client.example');
  t.match(ehlo, /STARTTLS/);
  t.match(ehlo, /SIZE 26214400/);
  t.notMatch(ehlo, /AUTH/);
  t.ok(existsSync(join(rig.app.config.data_dir, 'smtp-tls', 'cert.pem')));
  const tls = await rig.send({ from: 'x@sender.example', to: ['tls@acme-inbox.net'] }, rfc822({ From: 'x@sender.example', Subject: 'over tls' }, 'hi'));
  const got = await rig.api(acme.token, 'GET', `/emails/receiving/${tls.id}`);
  t.match(got.body.headers.received, /with ESMTPS \(using TLSv1\.[23] with cipher /, 'nodemailer upgraded the session');
});

t.test("deleting one team's copy leaves the other team's source intact", async (t) => {
  await rig.send({ from: 'x@sender.example', to: ['a@acme-inbox.net', 'b@other-inbox.net'] },
    rfc822({ From: 'x@sender.example', Subject: 'Shared source' }, 'one file, two names'));
  const mine = (await rig.api(acme.token, 'GET', '/emails/receiving?search=Shared%20source')).body.data[0];
  const theirs = (await rig.api(other.token, 'GET', '/emails/receiving?search=Shared%20source')).body.data[0];
  await rig.api(acme.token, 'DELETE', `/emails/receiving/${mine.id}`);
  const got = await rig.api(other.token, 'GET', `/emails/receiving/${theirs.id}`);
  const raw = await fetch(got.body.raw.download_url);
  t.equal(raw.status, 200);
  t.match(await raw.text(), /one file, two names/);
});

t.test('a database failure at end of data answers 451 and leaves no file behind', async (t) => {
  const ingest = rig.app.appliance.services.receiving.ingest;
  const real = ingest.commits;
  ingest.commits = { run: async () => { throw new Error('SQLITE_IOERR'); } };
  t.teardown(() => { ingest.commits = real; });
  const spool = join(rig.app.config.data_dir, 'spool');
  const files = () => readdirSync(join(spool, 'received'), { recursive: true }).filter((f) => String(f).endsWith('.eml')).length;
  const before = files();
  const err = await rig.send({ from: 'x@sender.example', to: ['a@acme-inbox.net'] }, rfc822({ From: 'x@sender.example', Subject: 'lost?' }, 'x'))
    .then(() => undefined, (e: { responseCode?: number; response?: string }) => e);
  t.equal(err?.responseCode, 451, 'temporary: the sender keeps the message and retries');
  t.match(err?.response, /^451 4\.3\.0 /);
  t.equal(files(), before, 'no raw file left in received/');
  t.same(readdirSync(join(spool, 'incoming')), [], 'nothing left in incoming/');
});

t.test("a burst from one sender asks its SPF record once: the checks keep answers for seconds", async (t) => {
  rig.dns.set('burst.example', [{ type: 'TXT', value: 'v=spf1 ip4:127.0.0.1 -all' }]);
  const asked = () => rig.dns.queries.filter((q) => q.name === 'burst.example' && q.type === 'TXT').length;
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const message = rfc822({ From: 'news@burst.example', To: 'support@acme-inbox.net', Subject: `burst ${i}`, 'Message-ID': `<burst-${i}@burst.example>` }, 'hello');
    ids.push((await rig.send({ from: 'news@burst.example', to: ['support@acme-inbox.net'] }, message)).id);
  }
  t.equal(asked(), 1, 'one TXT question for three messages');
  for (const id of ids) {
    const got = await rig.api(acme.token, 'GET', `/emails/receiving/${id}`);
    t.match(got.body.authentication, { spf: { result: 'pass', domain: 'burst.example' } }, 'each message has the SPF verdict of the kept answer');
  }
});
