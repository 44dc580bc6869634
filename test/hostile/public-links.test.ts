import { createHash } from 'node:crypto';
import { request } from 'node:http';
import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// The links that are credentials (share pages, signed downloads of sent and received files):
// a signed token is only accepted with its full GCM tag, links never point at the Host a caller
// names, and request logs keep no token.
const rig = await startInboundRig();
t.teardown(() => rig.stop());
const base = rig.app.baseUrl;
rig.dns.set('inbox-one.net', [{ type: 'MX', exchange: 'mx.inbox-one.net', priority: 10 }]);
rig.dns.set('mx.inbox-one.net', [{ type: 'A', value: '127.0.0.1' }]);
const team = await rig.app.newTeam('Links');
fakeSendingDomains(rig.app, rig.dns).add({ teamId: team.teamId, name: 'links-sender.net' });
rig.addDomain(team.teamId, 'links-inbox.net');

const pdf = Buffer.from('%PDF-1.4 sent ' + 'x'.repeat(500));
const sent = await call(base, 'POST', '/emails', {
  token: team.token,
  body: { from: 'a@links-sender.net', to: 'ann@inbox-one.net', subject: 'Files', text: 'see attached', attachments: [{ content: pdf.toString('base64'), filename: 'sent.pdf' }] },
});
const sentId = sent.body.id as string;
const csv = 'a,b\n1,2\n';
const received = await rig.send({ from: 'env@far.example', to: ['desk@links-inbox.net'] }, rfc822({
  From: 'x@far.example', To: 'desk@links-inbox.net', Subject: 'Numbers', 'Content-Type': 'multipart/mixed; boundary=m',
}, ['--m', 'Content-Type: text/plain', '', 'numbers attached', '--m', 'Content-Type: text/csv',
  'Content-Disposition: attachment; filename=numbers.csv', 'Content-Transfer-Encoding: base64', '', Buffer.from(csv).toString('base64'), '--m--', ''].join('\r\n')));
const receivedId = received.id;

/** One API call through node:http, which sends the Host header it is given as it is. */
function withHost(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const json = body === undefined ? {} : { 'content-type': 'application/json' };
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method, headers: { authorization: `Bearer ${team.token}`, 'user-agent': 'links-test/1.0', ...json, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The link with its GCM tag (third part of v1.<iv>.<tag>.<body>) cut to `bytes`. */
function cutTag(url: string, bytes: number): string {
  const token = url.split('/').pop()!;
  const [version, iv, tag, body] = token.split('.') as [string, string, string, string];
  const cut = Buffer.from(tag, 'base64url').subarray(0, bytes).toString('base64url');
  return url.slice(0, -token.length) + [version, iv, cut, body].join('.');
}

const tokenOf = (url: string) => url.split('/').pop()!;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

t.test('signed downloads answer only with the full 16-byte tag; a cut one is an unknown link', async (t) => {
  const sentParts = await call(base, 'GET', `/emails/${sentId}/attachments`, { token: team.token });
  const receivedMail = await call(base, 'GET', `/emails/receiving/${receivedId}`, { token: team.token });
  const receivedParts = await call(base, 'GET', `/emails/receiving/${receivedId}/attachments`, { token: team.token });
  const links = {
    sent: sentParts.body.data[0].download_url as string,
    'received attachment': receivedParts.body.data[0].download_url as string,
    'received raw': receivedMail.body.raw.download_url as string,
  };
  const unknown = await fetch(`${base}/downloads/sent/v1.AAAA.AAAA.AAAA`);
  const unknownBody = await unknown.json();
  t.equal(unknown.status, 404);
  for (const [what, url] of Object.entries(links)) {
    t.match(url, /\/downloads\/(sent|received)\/v1\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/, `${what}: a 12-byte IV and a 16-byte tag`);
    t.equal((await fetch(url)).status, 200, `${what}: the real link`);
    for (const bytes of [4, 8, 12]) {
      const cut = await fetch(cutTag(url, bytes));
      t.equal(cut.status, 404, `${what}: tag cut to ${bytes} bytes`);
      t.same(await cut.json(), unknownBody, `${what}: ${bytes} bytes looks like an unknown link`);
    }
  }
  t.equal((await fetch(links.sent.replace(/\.([\w-]{22})\./, '.$1!!.'))).status, 404, 'characters the decoder would skip');
});

t.test('links point at the listener, never at the Host or X-Forwarded-Host a caller sends', async (t) => {
  const evil = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
  const shared = await withHost('POST', `/emails/${sentId}/share`, evil, {});
  t.equal(shared.status, 200);
  const sentParts = await withHost('GET', `/emails/${sentId}/attachments`, evil);
  const answers = [
    shared.body.url as string,
    sentParts.body.data[0].download_url as string,
    (await withHost('GET', `/emails/${sentId}/attachments/${sentParts.body.data[0].id}`, evil)).body.download_url as string,
    (await withHost('GET', `/emails/receiving/${receivedId}`, evil)).body.raw.download_url as string,
    (await withHost('GET', `/emails/receiving/${receivedId}/attachments`, evil)).body.data[0].download_url as string,
  ];
  for (const url of answers) {
    t.ok(url.startsWith(`${base}/`), `${url.slice(0, 60)}… is on ${base}`);
    t.notMatch(url, /evil/);
  }
  t.equal((await fetch(answers[0]!)).status, 200, 'and the share link works there');
});

t.test('with public_base_url set, links are on it whatever the Host', async (t) => {
  const configured = await startTestAppliance({ redis: rig.app.redis, env: { SVC_PUBLIC_BASE_URL: 'https://mail.example.test/svc/' } });
  t.teardown(() => configured.stop());
  const other = await configured.newTeam('Configured');
  fakeSendingDomains(configured).add({ teamId: other.teamId, name: 'configured-sender.net' });
  const email = await call(configured.baseUrl, 'POST', '/emails', {
    token: other.token,
    body: { from: 'a@configured-sender.net', to: 'delivered@simulator.svc.invalid', subject: 's', text: 't', attachments: [{ content: pdf.toString('base64'), filename: 'a.pdf' }] },
  });
  t.equal(email.status, 200);
  const evil = { headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' } };
  const shared = await call(configured.baseUrl, 'POST', `/emails/${email.body.id}/share`, { token: other.token, body: {}, ...evil });
  const parts = await call(configured.baseUrl, 'GET', `/emails/${email.body.id}/attachments`, { token: other.token, ...evil });
  t.match(shared.body.url, /^https:\/\/mail\.example\.test\/svc\/share\/emails\/[\w-]{43}$/);
  t.match(parts.body.data[0].download_url, /^https:\/\/mail\.example\.test\/svc\/downloads\/sent\/v1\./);
  // The proxy at the public base forwards to the listener: the same path works there.
  const onListener = parts.body.data[0].download_url.replace('https://mail.example.test/svc', configured.baseUrl);
  t.equal((await fetch(onListener)).status, 200);
});

t.test('request logs keep the shape of share and download links, never their tokens', async (t) => {
  const shared = await call(base, 'POST', `/emails/${sentId}/share`, { token: team.token, body: { expires_in: '1h' } });
  const sentParts = await call(base, 'GET', `/emails/${sentId}/attachments`, { token: team.token });
  const receivedMail = await call(base, 'GET', `/emails/receiving/${receivedId}`, { token: team.token });
  const receivedParts = await call(base, 'GET', `/emails/receiving/${receivedId}/attachments`, { token: team.token });
  const urls = [shared.body.url, sentParts.body.data[0].download_url, receivedMail.body.raw.download_url, receivedParts.body.data[0].download_url] as string[];
  // A link pasted into a request body (a custom header of a send) is a link too.
  const resent = await call(base, 'POST', '/emails', {
    token: team.token, body: { from: 'a@links-sender.net', to: 'ann@inbox-one.net', subject: 'fwd', text: 'x', headers: { 'X-Shared': shared.body.url } },
  });
  t.equal(resent.status, 200);
  const tokens = urls.map(tokenOf);
  t.equal(tokens.length, 4);
  await rig.app.appliance.services.api.logWriter.flush();
  const rows = rig.app.appliance.services.database.sqlite!.prepare('SELECT * FROM request_logs WHERE team_id = ?').all(team.teamId) as Record<string, unknown>[];
  const stored = JSON.stringify(rows);
  for (const token of tokens) {
    t.notOk(stored.includes(token), `the stored rows hold no ${token.slice(0, 8)}…`);
    t.notOk(stored.includes(token.split('.').pop()!), 'nor any part of it');
  }

  const listed = await call(base, 'GET', '/logs?limit=100', { token: team.token });
  const find = (method: string, endpoint: string) => listed.body.data.find((l: { method: string; endpoint: string }) => l.method === method && l.endpoint === endpoint);
  const shareLog = await call(base, 'GET', `/logs/${find('POST', `/emails/${sentId}/share`).id}`, { token: team.token });
  const [shareBase] = shared.body.url.split('/share/emails/');
  t.equal(shareLog.body.response_body.url, `${shareBase}/share/emails/<redacted sha256:${sha256(tokens[0]!)}>`, 'the share URL: shape kept, token measured');
  const partsLog = await call(base, 'GET', `/logs/${find('GET', `/emails/${sentId}/attachments`).id}`, { token: team.token });
  t.match(partsLog.body.response_body.data[0], { filename: 'sent.pdf', download_url: /\/downloads\/sent\/<redacted sha256:[0-9a-f]{64}>$/ });
  const rawLog = await call(base, 'GET', `/logs/${find('GET', `/emails/receiving/${receivedId}`).id}`, { token: team.token });
  t.match(rawLog.body.response_body, { id: receivedId, raw: { size: Number, sha256: /^[0-9a-f]{64}$/ } }, '`raw` counts as content: measured whole');
  const receivedPartsLog = await call(base, 'GET', `/logs/${find('GET', `/emails/receiving/${receivedId}/attachments`).id}`, { token: team.token });
  t.match(receivedPartsLog.body.response_body.data[0], { filename: 'numbers.csv', download_url: /\/downloads\/received\/<redacted sha256:[0-9a-f]{64}>$/ });
  const sendLog = await call(base, 'GET', `/logs/${find('POST', '/emails').id}`, { token: team.token });
  t.match(sendLog.body.request_body.headers['X-Shared'], /\/share\/emails\/<redacted sha256:[0-9a-f]{64}>$/, 'a link in a request body');
  const answers = JSON.stringify([shareLog.body, partsLog.body, rawLog.body, receivedPartsLog.body, sendLog.body, listed.body]);
  for (const token of tokens) t.notOk(answers.includes(token), 'GET /logs shows no token either');
});
