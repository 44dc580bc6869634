import { createServer } from 'node:http';
import t from 'tap';
import { Resend } from 'resend';
import type { OutboundRole } from '../../bin/roles/outbound.js';
import { attachmentFetcher } from '../../net/attachment-fetcher.js';
import { createResolver } from '../../dns/resolver.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { waitFor } from '../helpers/deadline.js';
import { eventsOf, mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';

// Sent attachments (15-minute signed download links) and share links (a secret URL returned
// once, only its hash kept; unknown, expired and revoked answer the same 404).
const dns = await mailZone();
const mx = await startFakeMx();
const clock = testClock();
const app = await startTestAppliance({
  clock, roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); });
const team = await app.newTeam('Files');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'files-sender.net' });
const base = app.baseUrl;
const outbound = app.appliance.running.find((r) => r.name === 'outbound') as OutboundRole;
const pdf = Buffer.from('%PDF-1.4 fake pdf body ' + 'x'.repeat(3000));
const logo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);
const sent = await call(base, 'POST', '/emails', {
  token: team.token,
  body: {
    from: 'files@files-sender.net', to: 'ann@inbox-one.net', subject: 'Your <b>report</b>', html: '<p>See <img src="cid:logo1"> <script>alert(1)</script></p>',
    attachments: [
      { content: pdf.toString('base64'), filename: 'report.pdf' },
      { content: { type: 'Buffer', data: [...logo] }, filename: 'logo.png', content_type: 'image/png', content_id: 'logo1' },
      { content: Buffer.from('<script>x</script>').toString('base64'), filename: 'page.html' },
    ],
  },
});
const emailId = sent.body.id as string;

t.test('attachments go out in the message: a file and an inline image', async (t) => {
  t.equal(sent.status, 200);
  await waitFor('delivery', async () => mx.received.find((m) => m.rcptTo === 'ann@inbox-one.net'));
  const raw = mx.received.find((m) => m.rcptTo === 'ann@inbox-one.net')!.raw.toString();
  t.match(raw, /filename=report\.pdf/);
  t.match(raw, /Content-ID: <logo1>/i);
  t.match(raw, /multipart\/related/i);
});

t.test('GET /emails/{id}/attachments lists parts with 15-minute download links', async (t) => {
  const list = await call(base, 'GET', `/emails/${emailId}/attachments`, { token: team.token });
  t.equal(list.status, 200);
  t.equal(list.body.object, 'list');
  t.match(list.body.data, [
    { filename: 'report.pdf', size: pdf.length, content_type: 'application/pdf', content_disposition: 'attachment', content_id: null },
    { filename: 'logo.png', content_type: 'image/png', content_disposition: 'inline', content_id: 'logo1' },
    { filename: 'page.html', content_type: 'text/html' },
  ]);
  const item = list.body.data[0];
  t.equal(Date.parse(item.expires_at) - clock.now().getTime(), 15 * 60_000);
  const download = await fetch(item.download_url);
  t.equal(download.status, 200, 'no Authorization needed: the link is the credential');
  t.same(Buffer.from(await download.arrayBuffer()), pdf);
  t.match(download.headers.get('content-disposition'), /attachment; filename="?report\.pdf"?/);
  const html = await fetch(list.body.data[2].download_url);
  t.equal(html.headers.get('content-type'), 'application/octet-stream', 'HTML is never served as HTML');
  const one = await call(base, 'GET', `/emails/${emailId}/attachments/${item.id}`, { token: team.token });
  t.equal(one.body.id, item.id);
  clock.advance(15 * 60_000 + 1000);
  t.equal((await fetch(item.download_url)).status, 404, 'expired after 15 minutes');
  t.equal((await fetch(item.download_url.replace(/.{6}$/, 'AAAAAA'))).status, 404, 'a forged token');
  const missing = await call(base, 'GET', `/emails/${emailId}/attachments/${crypto.randomUUID()}`, { token: team.token });
  t.equal(missing.status, 404);
});

t.test('share links: secret URL once, read-only page without sign-in, one 404 for unknown/expired/revoked', async (t) => {
  const shared = await call(base, 'POST', `/emails/${emailId}/share`, { token: team.token, body: { expires_in: '10m' } });
  t.equal(shared.status, 200);
  t.equal(shared.body.object, 'email');
  t.equal(shared.body.id, emailId);
  const url = shared.body.url as string;
  t.match(url, /\/share\/emails\/[A-Za-z0-9_-]{43}$/);
  const page = await fetch(url);
  t.equal(page.status, 200);
  const text = await page.text();
  t.match(text, /Your &lt;b&gt;report&lt;\/b&gt;/, 'the subject is escaped');
  t.notMatch(text, /<script>alert/, 'the message HTML only appears escaped inside a sandboxed frame');
  t.match(text, /<iframe sandbox=""/);
  t.match(page.headers.get('content-security-policy'), /default-src 'none'/);
  t.equal(page.headers.get('referrer-policy'), 'no-referrer');
  const token = url.split('/').pop()!;
  const stored = await app.appliance.services.database.db.selectFrom('email_share_links').selectAll().where('email_id', '=', emailId).execute();
  t.notOk(JSON.stringify(stored).includes(token), 'only a hash of the secret is stored');

  const unknown = await fetch(url.replace(token, 'x'.repeat(43)));
  const unknownBody = await unknown.text();
  t.equal(unknown.status, 404);
  clock.advance(11 * 60_000);
  const expired = await fetch(url);
  t.equal(expired.status, 404);
  t.equal(await expired.text(), unknownBody, 'expired looks like unknown');
  const second = await call(base, 'POST', `/emails/${emailId}/share`, { token: team.token, body: {} });
  t.equal((await fetch(second.body.url)).status, 200, 'default expiry (48 hours)');
  const revoked = await call(base, 'DELETE', `/emails/${emailId}/share`, { token: team.token });
  t.match(revoked.body, { object: 'email', id: emailId, revoked: 1 });
  const afterRevoke = await fetch(second.body.url);
  t.equal(afterRevoke.status, 404);
  t.equal(await afterRevoke.text(), unknownBody, 'revoked looks like unknown');
});

t.test('share refusals: bad or too long expires_in, unknown or foreign ids', async (t) => {
  for (const expires_in of ['49 hours', '3 days', 'soon', '0m']) {
    const r = await call(base, 'POST', `/emails/${emailId}/share`, { token: team.token, body: { expires_in } });
    t.equal(r.status, 422, expires_in);
    t.equal(r.body.name, 'validation_error', expires_in);
  }
  t.equal((await call(base, 'POST', `/emails/${emailId}/share`, { token: team.token, body: { expires_in: '48h' } })).status, 200);
  const other = await app.newTeam('Nosy');
  t.equal((await call(base, 'POST', `/emails/${emailId}/share`, { token: other.token, body: {} })).status, 404);
  t.equal((await call(base, 'GET', `/emails/${emailId}/attachments`, { token: other.token })).status, 404);
  t.equal((await call(base, 'POST', `/emails/${crypto.randomUUID()}/share`, { token: team.token, body: {} })).status, 404);
});

t.test('the SDK: attachments.list/get and share', async (t) => {
  const resend = new Resend(team.token, { baseUrl: base });
  const list = await resend.emails.attachments.list({ emailId });
  t.equal(list.error, null);
  t.equal(list.data?.data.length, 3);
  const one = await resend.emails.attachments.get({ emailId, id: list.data!.data[1]!.id });
  t.equal(one.error, null);
  const share = await resend.emails.share(emailId, { expiresIn: '1 day' });
  t.equal(share.error, null);
  t.match((share.data as { url: string }).url, /\/share\/emails\//);
});

t.test('path attachments are fetched by svc through the address policy', async (t) => {
  const refused = await call(base, 'POST', '/emails', {
    token: team.token, body: { from: 'files@files-sender.net', to: 'ann@inbox-one.net', subject: 's', text: 't', attachments: [{ path: 'http://127.0.0.1:1/secret.pdf' }] },
  });
  t.equal(refused.status, 422);
  t.equal(refused.body.name, 'invalid_attachment');
  t.match(refused.body.message, /refused address/);
  t.equal((await call(base, 'POST', '/emails', { token: team.token, body: { from: 'files@files-sender.net', to: 'ann@inbox-one.net', subject: 's', text: 't', attachments: [{ path: 'file:///etc/passwd' }] } })).body.name, 'invalid_attachment');

  const server = createServer((req, res) => {
    if (req.url === '/big') { res.writeHead(200); res.end(Buffer.alloc(5000)); return; }
    if (req.url === '/moved') { res.writeHead(302, { location: 'http://127.0.0.1/x' }); res.end(); return; }
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="invoice.pdf"' });
    res.end('PDFDATA');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as { port: number }).port;
  const fetcher = attachmentFetcher({ resolver: createResolver({ servers: [dns.address] }), allowPrivate: true, timeoutMs: 5000 });
  const got = await fetcher(`http://127.0.0.1:${port}/invoice`, 1000);
  t.same(got, { content: Buffer.from('PDFDATA'), contentType: 'application/pdf', filename: 'invoice.pdf' });
  await t.rejects(fetcher(`http://127.0.0.1:${port}/big`, 1000), /larger than/);
  await t.rejects(fetcher(`http://127.0.0.1:${port}/moved`, 1000), /302/, 'redirects are not followed');
  const strict = attachmentFetcher({ resolver: createResolver({ servers: [dns.address] }), allowPrivate: false, timeoutMs: 5000 });
  await t.rejects(strict(`http://127.0.0.1:${port}/invoice`, 1000), /refused address/);
  t.ok((await eventsOf(app, emailId)).length > 0);
  outbound.poke();
});
