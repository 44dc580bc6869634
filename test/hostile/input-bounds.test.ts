import { brotliCompressSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

// Bodies built to break the server rather than to send mail: nesting 10,000 levels deep, hundreds
// of thousands of members, thousands of headers, bodies that do not decompress. Each is a 4xx with
// the spec's error body — never a 500 — and nothing is stored.
const dns = await mailZone();
const app = await startTestAppliance({
  env: { SVC_DNS_SERVERS: dns.address, SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000', SVC_EMAIL_ATTACHMENTS_ALLOW_PRIVATE: 'true' },
});
const fileServer = await startWebhookReceiver();
t.teardown(async () => { await app.stop(); await dns.stop(); await fileServer.stop(); });
const team = await app.newTeam('Bounds');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
const db = app.appliance.services.database.db;
const good = { from: 'hello@sender.net', to: 'ann@inbox-one.net', subject: 'Hi', text: 'Hello' };
const stored = async () => Number((await db.selectFrom('emails').select((e) => e.fn.countAll().as('n')).where('team_id', '=', team.teamId).executeTakeFirstOrThrow()).n);
const sendRaw = (raw: string, path = '/emails') => call(app.baseUrl, 'POST', path, { token: team.token, raw });
const send = (body: unknown, path = '/emails') => call(app.baseUrl, 'POST', path, { token: team.token, body });

/** `{"k":{"k":…}}` or `[[…]]`, `levels` deep, as text (a JS value that deep cannot be stringified safely). */
function nested(levels: number, kind: 'object' | 'array'): string {
  return kind === 'object' ? `${'{"k":'.repeat(levels)}"v"${'}'.repeat(levels)}` : `${'['.repeat(levels)}"v"${']'.repeat(levels)}`;
}

/** A good send with `field` replaced by `value` (JSON text). */
const withField = (field: string, value: string) => `${JSON.stringify(good).slice(0, -1)},${JSON.stringify(field)}:${value}}`;

t.test('nesting 10,000 levels deep in tags, headers or to: 400 validation_error, not a 500', async (t) => {
  const before = await stored();
  for (const field of ['tags', 'headers', 'to']) {
    for (const kind of ['object', 'array'] as const) {
      const r = await sendRaw(withField(field, nested(10_000, kind)));
      t.equal(r.status, 400, `${field} (${kind}): ${JSON.stringify(r.body).slice(0, 200)}`);
      t.equal(r.body?.name, 'validation_error');
      t.equal(r.body?.statusCode, 400);
      t.match(r.body?.errors?.[0]?.path, new RegExp(`^${field}\\b`), 'the path names the field');
      t.match(r.body?.errors?.[0]?.message, /deeper than 32/);
    }
  }
  const batch = await sendRaw(`[${withField('tags', nested(10_000, 'array'))}]`, '/emails/batch');
  t.equal(batch.status, 400, 'inside a batch too');
  t.match(batch.body?.errors?.[0]?.path, /^\[0\]\.tags/);
  t.equal(await stored(), before, 'nothing stored');
});

t.test('32 levels pass the body bounds; 33 do not', async (t) => {
  // The body is level 1, `template` 2; `variables` is the first of 30 nested objects, 3 to 32.
  const template = (levels: number) => withField('template', `{"id":"welcome","variables":${nested(levels, 'object')}}`);
  const atTheLimit = await sendRaw(template(30));
  t.equal(atTheLimit.status, 422, 'reaches the send rules');
  t.equal(atTheLimit.body.name, 'validation_error');
  t.equal(atTheLimit.body.errors[0].path, 'template.id');
  const over = await sendRaw(template(31));
  t.equal(over.status, 400);
  t.match(over.body.errors[0].path, /^template\.variables(\.k){30}$/);
  t.match(over.body.message, /deeper than 32/);
});

t.test('200,000 tags (object or array form): 4xx, never SQLite\'s "too many variables"', async (t) => {
  const before = await stored();
  const asObject = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`t${i}`, 'v']));
  const asArray = Array.from({ length: 200_000 }, (_, i) => ({ name: `t${i}`, value: 'v' }));
  for (const [label, tags] of [['object', asObject], ['array', asArray]] as const) {
    const r = await send({ ...good, tags });
    t.equal(r.status, 400, `${label}: ${JSON.stringify(r.body).slice(0, 200)}`);
    t.equal(r.body.name, 'validation_error');
    t.equal(r.body.errors[0].path, 'tags');
    t.match(r.body.errors[0].message, /more than 10,000/);
  }
  t.equal(await stored(), before, 'nothing stored');
});

t.test('tags: 50 per email pass, 51 are 422 validation_error', async (t) => {
  const tags = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `tag_${i}`, value: `v${i}` }));
  const ok = await send({ ...good, tags: tags(50) });
  t.equal(ok.status, 200);
  t.equal((await call(app.baseUrl, 'GET', `/emails/${ok.body.id}`, { token: team.token })).body.tags.length, 50);
  const over = await send({ ...good, tags: Object.fromEntries(tags(51).map((x) => [x.name, x.value])) });
  t.equal(over.status, 422);
  t.equal(over.body.name, 'validation_error');
  t.equal(over.body.errors[0].path, 'tags');
  t.match(over.body.message, /at most 50 tags/);
});

t.test('5,000 custom headers of 3.9 KB: 422 validation_error; 100 pass', async (t) => {
  const before = await stored();
  const headers = (n: number, size: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-Custom-${i}`, 'h'.repeat(size)]));
  const r = await send({ ...good, headers: headers(5000, 3900) });
  t.equal(r.status, 422, JSON.stringify(r.body).slice(0, 200));
  t.equal(r.body.name, 'validation_error');
  t.equal(r.body.errors[0].path, 'headers');
  t.match(r.body.message, /at most 100 custom headers/);
  t.equal((await send({ ...good, headers: headers(101, 10) })).status, 422);
  t.equal(await stored(), before, 'nothing stored');
  t.equal((await send({ ...good, headers: headers(100, 10) })).status, 200);
});

t.test('recipients and attachments are counted before any is read', async (t) => {
  const many = Array.from({ length: 100_000 }, (_, i) => `r${i}@inbox-one.net`);
  const r = await send({ ...good, to: many });
  t.equal(r.status, 422);
  t.equal(r.body.name, 'validation_error');
  t.match(r.body.message, /at most 50 recipients/);
  const parts = Array.from({ length: 101 }, () => ({ content: 'aGk=', filename: 'a.txt' }));
  const a = await send({ ...good, attachments: parts });
  t.equal(a.status, 422);
  t.equal(a.body.name, 'invalid_attachment');
});

t.test('a batch of 100 emails with 50 tags each is accepted and stored whole', async (t) => {
  const tags = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`tag_${i}`, `value_${i}`]));
  const to = Array.from({ length: 50 }, (_, i) => `r${i}@inbox-one.net`);
  const emails = Array.from({ length: 100 }, (_, i) => ({ ...good, to, subject: `Batch ${i}`, tags }));
  const r = await send(emails, '/emails/batch');
  t.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  t.equal(r.body.data.length, 100);
  const ids = r.body.data.map((d: { id: string }) => d.id);
  const tagRows = await db.selectFrom('email_tags').select((e) => e.fn.countAll().as('n')).where('email_id', 'in', ids).executeTakeFirstOrThrow();
  t.equal(Number(tagRows.n), 5000, 'every tag row of every email');
  const rcptRows = await db.selectFrom('email_recipients').select((e) => e.fn.countAll().as('n')).where('email_id', 'in', ids).executeTakeFirstOrThrow();
  t.equal(Number(rcptRows.n), 5000, 'every recipient row of every email');
});

/** POSTs raw bytes with a Content-Encoding. */
async function encoded(body: Buffer, encoding: string) {
  const res = await fetch(`${app.baseUrl}/emails`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': encoding, authorization: `Bearer ${team.token}`, 'user-agent': 'svc-tests/1.0' },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

t.test('a body that does not decode with its Content-Encoding: 400 validation_error, not a 500', async (t) => {
  const garbage = Buffer.from('this is not compressed at all '.repeat(20));
  const gz = gzipSync(JSON.stringify(good));
  const cases: [string, Buffer, string][] = [
    ['br garbage', garbage, 'br'],
    ['gzip garbage', garbage, 'gzip'],
    ['deflate garbage', garbage, 'deflate'],
    ['zstd garbage', garbage, 'zstd'],
    ['gzip cut short', gz.subarray(0, gz.length - 12), 'gzip'],
    ['gzip of a body that is not JSON', gzipSync('{"from": '), 'gzip'],
    ['an unknown encoding', Buffer.from(JSON.stringify(good)), 'compress'],
    ['two encodings', gz, 'gzip, br'],
  ];
  const before = await stored();
  for (const [label, body, encoding] of cases) {
    const r = await encoded(body, encoding);
    t.equal(r.status, 400, `${label}: ${JSON.stringify(r.body)}`);
    t.equal(r.body?.name, 'validation_error', label);
    t.equal(r.body?.statusCode, 400, label);
    t.type(r.body?.message, 'string', label);
  }
  t.equal(await stored(), before, 'nothing stored');
  t.equal((await encoded(gz, 'gzip')).status, 200, 'a good gzip body is read');
  t.equal((await encoded(brotliCompressSync(JSON.stringify(good)), 'br')).status, 200, 'a good br body is read');
});

t.test('a fetched attachment\'s name keeps the filename rule: no CR, LF, NUL or other controls', async (t) => {
  fileServer.setFallback('/download', { headers: { 'content-type': 'text/plain', 'content-disposition': "attachment; filename*=UTF-8''a%0D%0Ab%00%1B.txt" }, body: 'one' });
  fileServer.setFallback('/files/x%0d%0ay%00.txt', { body: 'two' });
  const long = `${'n'.repeat(300)}.txt`;
  fileServer.setFallback(`/files/${long}`, { body: 'three' });
  const r = await send({
    ...good,
    attachments: [{ path: `${fileServer.url}/download` }, { path: `${fileServer.url}/files/x%0d%0ay%00.txt` }, { path: `${fileServer.url}/files/${long}` }],
  });
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.equal(fileServer.requests.length, 3, 'all three were fetched');
  const list = await call(app.baseUrl, 'GET', `/emails/${r.body.id}/attachments`, { token: team.token });
  const names = list.body.data.map((a: { filename: string }) => a.filename);
  t.same(names.slice(0, 2), ['ab.txt', 'xy.txt'], 'from Content-Disposition and from the URL, control characters gone');
  t.equal(names[2], `${'n'.repeat(251)}.txt`, 'a long name keeps its last 255 characters');
  for (const name of names) t.notMatch(name, /[\x00-\x1f\x7f]/);
});

t.test('a filename the caller gives must already keep the rule', async (t) => {
  for (const filename of ['a\tb.txt', 'a\x1bb.txt', `${'n'.repeat(252)}.txt`]) {
    const r = await send({ ...good, attachments: [{ content: 'aGk=', filename }] });
    t.equal(r.status, 422, JSON.stringify(filename));
    t.equal(r.body.name, 'invalid_attachment');
  }
  t.equal((await send({ ...good, attachments: [{ content: 'aGk=', filename: `${'n'.repeat(251)}.txt` }] })).status, 200, '255 characters pass');
});
