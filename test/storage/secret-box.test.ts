import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openSecretBox } from '../../storage/files/index.js';

// A sealed value opens only as sealed: a 12-byte IV, the full 16-byte GCM tag, base64url parts
// in the spelling seal writes. GCM itself accepts a tag cut to 4, 8 or 12 bytes.
const dir = mkdtempSync(join(tmpdir(), 'svc-secret-box-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const box = openSecretBox(join(dir, 'secret.key'));
const sealed = box.seal('{"v":1,"k":"s","e":"email","a":"part","x":1}');
const [version, iv, tag, body] = sealed.split('.') as [string, string, string, string];
const b64 = (b: Buffer) => b.toString('base64url');
const withParts = (parts: { iv?: string; tag?: string; body?: string }) => [version, parts.iv ?? iv, parts.tag ?? tag, parts.body ?? body].join('.');

t.test('a sealed value opens, and carries a 12-byte IV and a 16-byte tag', async (t) => {
  t.equal(box.open(sealed), '{"v":1,"k":"s","e":"email","a":"part","x":1}');
  t.equal(Buffer.from(iv, 'base64url').length, 12);
  t.equal(Buffer.from(tag, 'base64url').length, 16);
  t.equal(box.open(box.seal('')), '', 'an empty secret too');
});

t.test('the real tag cut to 4, 8 or 12 bytes is refused', async (t) => {
  for (const bytes of [4, 8, 12, 15]) {
    const cut = withParts({ tag: b64(Buffer.from(tag, 'base64url').subarray(0, bytes)) });
    t.throws(() => box.open(cut), /not a sealed value/, `${bytes}-byte tag`);
  }
  t.throws(() => box.open(withParts({ tag: b64(Buffer.concat([Buffer.from(tag, 'base64url'), Buffer.alloc(1)])) })), /not a sealed value/, 'a 17-byte tag');
  t.throws(() => box.open(withParts({ tag: '' })), /not a sealed value/, 'no tag');
});

t.test('an IV of another length is refused', async (t) => {
  const ivBytes = Buffer.from(iv, 'base64url');
  for (const other of [ivBytes.subarray(0, 8), Buffer.concat([ivBytes, Buffer.alloc(4)])]) {
    t.throws(() => box.open(withParts({ iv: b64(other) })), /not a sealed value/, `${other.length}-byte IV`);
  }
});

t.test('parts spelled otherwise than seal writes them are refused', async (t) => {
  t.throws(() => box.open(withParts({ tag: `${tag}!!` })), /not a sealed value/, 'characters the decoder would skip');
  t.throws(() => box.open(withParts({ tag: `${tag}==` })), /not a sealed value/, 'padding');
  t.throws(() => box.open(withParts({ body: `${body}*` })), /not a sealed value/, 'in the body');
  t.throws(() => box.open(`${sealed}.extra`), /not a sealed value/, 'a fifth part');
  t.throws(() => box.open(sealed.replace(/^v1/, 'v2')), /not a sealed value/, 'another version');
  t.throws(() => box.open('v1.only'), /not a sealed value/, 'missing parts');
});

t.test('a changed byte anywhere fails authentication', async (t) => {
  const flip = (part: string) => { const b = Buffer.from(part, 'base64url'); b.writeUInt8(b.readUInt8(0) ^ 1, 0); return b64(b); };
  t.throws(() => box.open(withParts({ tag: flip(tag) })), 'tag');
  t.throws(() => box.open(withParts({ iv: flip(iv) })), 'IV');
  t.throws(() => box.open(withParts({ body: flip(body) })), 'body');
});
