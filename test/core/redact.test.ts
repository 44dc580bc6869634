import { createHash } from 'node:crypto';
import t from 'tap';
import { isInboxPath, redactBody, sourceFromUserAgent } from '../../core/request-logs/redact.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const kept = (path: string, body: unknown) => {
  const out = redactBody(path, body);
  return out === null ? null : JSON.parse(out);
};

t.test('nothing to keep: undefined and null bodies', async (t) => {
  t.equal(redactBody('/api-keys', undefined), null);
  t.equal(redactBody('/api-keys', null), null);
});

t.test('a plain body is kept as JSON text, unchanged', async (t) => {
  const body = { name: 'Production', permission: 'sending_access', inbox_access: 'none', tags: [{ name: 'a', value: 'b' }] };
  t.equal(redactBody('/api-keys', body), JSON.stringify(body));
  t.same(kept('/api-keys/{id}', { name: 'renamed', id: 'abc' }), { name: 'renamed', id: 'abc' });
  t.equal(redactBody('/x', 'just text'), JSON.stringify('just text'));
  t.equal(redactBody('/x', 42), '42');
});

t.test('a body naming a credential field is dropped whole', async (t) => {
  const fields = ['password', 'token', 'secret', 'key', 'api_key', 'private_key', 'signing_secret',
    'credential', 'credentials', 'passphrase', 'passwd', 'access_token', 'refresh_token', 'client_secret', 'Password', 'API_KEY'];
  for (const field of fields) {
    t.equal(redactBody('/anything', { name: 'n', [field]: 'hunter2' }), null, `top-level ${field}`);
  }
  t.equal(redactBody('/anything', { outer: { deeper: [{ password: 'x' }] } }), null, 'nested in objects and arrays');
  t.equal(redactBody('/anything', [{ ok: 1 }, { token: 'x' }]), null, 'in a top-level array');
  // the name decides, whatever the value: even an empty or null credential drops the body
  t.equal(redactBody('/anything', { token: null }), null);
  t.equal(redactBody('/anything', { secret: '' }), null);
  // the create-key answer carries the token: never stored
  t.equal(redactBody('/api-keys', { id: '0193', token: 'svc_0123456789abcdef_xyz' }), null);
});

t.test('a value that looks like one of our secrets drops the body too', async (t) => {
  for (const value of ['svc_0123456789abcdef_secret', 'svco_abc', 'svcor_abc', 'whsec_abc',
    '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----', '-----BEGIN RSA PRIVATE KEY-----\nx']) {
    t.equal(redactBody('/anything', { note: value }), null, value.slice(0, 12));
    t.equal(redactBody('/anything', { list: ['fine', value] }), null, `${value.slice(0, 12)} in an array`);
  }
  t.not(redactBody('/anything', { note: 'about svc_ tokens' }), null, 'the prefix only counts at the start');
});

t.test('fields that merely contain a credential word are not credentials', async (t) => {
  const body = { api_key_id: '0193abcd', key_count: 3, tokenizer: 'x', monkey: 'banana', keyboard: 'qwerty', secretary: 'Ann', domain_id: 'd' };
  t.same(kept('/logs', body), body);
});

t.test('html, text and content are replaced by their size and SHA-256', async (t) => {
  const html = '<p>Héllo</p>';
  const text = 'Hello';
  const content = Buffer.from('attachment bytes').toString('base64');
  const out = kept('/emails', { from: 'a@b.example', subject: 'Hi', html, text, attachments: [{ filename: 'f.txt', content }] });
  t.same(out, {
    from: 'a@b.example', subject: 'Hi',
    html: { size: Buffer.byteLength(html), sha256: sha(html) },
    text: { size: 5, sha256: sha(text) },
    attachments: [{ filename: 'f.txt', content: { size: content.length, sha256: sha(content) } }],
  });
  t.equal(out.html.size, 13, 'size counts UTF-8 bytes');
  t.notMatch(redactBody('/emails', { html }), /Héllo/);
});

t.test('non-string content is measured as its JSON; null content stays null', async (t) => {
  const data = [1, 2, 3];
  t.same(kept('/emails', { content: data, html: null, text: undefined }), { content: { size: 7, sha256: sha('[1,2,3]') }, html: null });
  t.same(kept('/emails', { react: { type: 'div' } }), { react: { size: 14, sha256: sha('{"type":"div"}') } });
  t.same(kept('/emails', { raw: 'MIME' }), { raw: { size: 4, sha256: sha('MIME') } });
});

t.test('content fields are measured inside arrays (batch sends)', async (t) => {
  const out = kept('/emails/batch', [{ to: 'x@y.example', html: '<b>1</b>' }, { to: 'z@y.example', text: 'two' }]);
  t.same(out, [
    { to: 'x@y.example', html: { size: 8, sha256: sha('<b>1</b>') } },
    { to: 'z@y.example', text: { size: 3, sha256: sha('two') } },
  ]);
});

t.test('/inbox bodies are never kept', async (t) => {
  t.equal(redactBody('/inbox', { subject: 'hi' }), null);
  t.equal(redactBody('/inbox/conversations/{id}', { status: 'open' }), null);
  t.equal(redactBody('/inbox/conversations/{id}/messages', [{ text: 'x' }]), null);
  t.ok(isInboxPath('/inbox'));
  t.ok(isInboxPath('/inbox/channels'));
  t.notOk(isInboxPath('/inboxes'), 'another resource that starts with the same letters');
  t.notOk(isInboxPath('/emails/inbox'));
  t.not(redactBody('/inboxes', { name: 'x' }), null);
});

t.test('an oversize body is replaced by a measurement', async (t) => {
  const subject = 'x'.repeat(70 * 1024);
  const body = { subject };
  const full = JSON.stringify(body);
  const out = kept('/emails', body);
  t.same(out, { omitted: 'too_large', size: Buffer.byteLength(full), sha256: sha(full) });
  t.ok(Buffer.byteLength(redactBody('/emails', body)!) < 200);
  // just under the limit is kept
  const small = { subject: 'y'.repeat(64 * 1024 - 20) };
  t.equal(redactBody('/emails', small), JSON.stringify(small));
  // large send content is measured first, so the body stays small and is kept
  const big = { html: 'z'.repeat(200 * 1024) };
  t.same(kept('/emails', big), { html: { size: 200 * 1024, sha256: sha(big.html) } });
});

t.test('share and download links keep their shape, the token becomes a measurement', async (t) => {
  const share = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde';
  const signed = 'v1.AAECAwQFBgcICQoL.AAECAwQFBgcICQoLDA0ODw.eyJ2IjoxfQ';
  const redacted = (token: string) => `<redacted sha256:${sha(token)}>`;
  t.same(kept('/emails/{email_id}/share', { object: 'email', id: 'e1', url: `https://mail.example.com/share/emails/${share}` }),
    { object: 'email', id: 'e1', url: `https://mail.example.com/share/emails/${redacted(share)}` });
  for (const kind of ['sent', 'received']) {
    const out = kept('/emails/{email_id}/attachments', { object: 'list', data: [{ id: 'a1', download_url: `http://127.0.0.1:3000/downloads/${kind}/${signed}`, expires_at: 'x' }] });
    t.equal(out.data[0].download_url, `http://127.0.0.1:3000/downloads/${kind}/${redacted(signed)}`, kind);
  }
  // Anywhere in any value or key, under /api/v1, in any case, percent-encoded, several at once.
  const note = `see /api/v1/share/emails/${share}?x=1 and HTTPS://H/DOWNLOADS/SENT/${signed}#top`;
  t.equal(kept('/x', { tags: [{ name: 'n', value: note }] }).tags[0].value,
    `see /api/v1/share/emails/${redacted(share)}?x=1 and HTTPS://H/DOWNLOADS/SENT/${redacted(signed)}#top`);
  t.same(kept('/x', { [`/share/emails/${share}`]: 1 }), { [`/share/emails/${redacted(share)}`]: 1 }, 'in a key');
  t.equal(kept('/x', { next: `https://a.example/?to=https%3A%2F%2Fh%2Fshare%2Femails%2F${share}` }).next,
    `https://a.example/?to=https%3A%2F%2Fh%2Fshare%2Femails%2F${redacted(share)}`);
  t.equal(kept('/x', `https://h/downloads/received/${signed}`), `https://h/downloads/received/${redacted(signed)}`, 'a bare string body');
  // the serialized text given by the caller is not reused when a link was replaced
  const body = { url: `https://h/share/emails/${share}` };
  t.notMatch(redactBody('/x', body, JSON.stringify(body))!, share);
  // paths that are not links stay as they are
  const plain = { a: '/share/emails/', b: '/downloads/other/x', c: 'https://h/emails/share', d: '/shared/emails/x' };
  t.equal(redactBody('/x', plain, JSON.stringify(plain)), JSON.stringify(plain));
});

t.test('sourceFromUserAgent', async (t) => {
  t.equal(sourceFromUserAgent('resend-node:6.38.0'), 'sdk:node');
  t.equal(sourceFromUserAgent('resend-python/2.10.0'), 'sdk:python');
  t.equal(sourceFromUserAgent('Resend-Go/2.0'), 'sdk:go');
  t.equal(sourceFromUserAgent('svc-node:1.0.0'), 'sdk:node');
  t.equal(sourceFromUserAgent('curl/8.5.0'), 'api');
  t.equal(sourceFromUserAgent('Mozilla/5.0 (X11; Linux x86_64)'), 'api');
  t.equal(sourceFromUserAgent('resend'), 'api', 'no SDK name');
  t.equal(sourceFromUserAgent('my-resend-node:1.0'), 'api', 'only at the start');
  t.equal(sourceFromUserAgent(''), 'api');
  t.equal(sourceFromUserAgent(undefined), 'api');
});
