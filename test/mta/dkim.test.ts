import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import t from 'tap';
import { dkimSigner, oversignedFields } from '../../mta/outbound/dkim.js';
import { composeMessage } from '../../mta/outbound/compose.js';
import type { EmailRow } from '../../storage/repos/index.js';

// Our DKIM signer (mailauth's canonicalization, our cached-key crypto.sign, oversigning) proven
// by two independent verifiers: mailauth's and dkimpy (Debian python3-dkim).

const require = createRequire(import.meta.url);
const { dkimVerify } = require('mailauth/lib/dkim/verify') as {
  dkimVerify(input: Buffer, options: { resolver: (name: string, type: string) => Promise<string[][]> }): Promise<{ results: { status: { result: string; comment?: string }; signingHeaders?: { keys: string } }[] }>;
};

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const record = `v=DKIM1; k=rsa; p=${p}`;
const key = { domain: 'signer.net', selector: 's1', privateKeyPem: pem };

const email: EmailRow = {
  id: '0193a5b0-c1d2-7e3f-8a9b-0c1d2e3f4a5b', team_id: 't', api_key_id: null, domain_id: 'd', region: 'us-east-1',
  from_header: 'Ünïcode Sender <hello@signer.net>', from_email: 'hello@signer.net',
  to_json: JSON.stringify([{ header: 'ann@inbox-one.net', address: 'ann@inbox-one.net' }]),
  cc_json: JSON.stringify([{ header: 'Bob <bob@inbox-two.net>', address: 'bob@inbox-two.net' }]), bcc_json: JSON.stringify([{ header: 'secret@inbox-two.net', address: 'secret@inbox-two.net' }]),
  reply_to_json: JSON.stringify([{ header: 'help@signer.net', address: 'help@signer.net' }]),
  subject: 'Grüße — a subject long enough to be folded by the composer because it keeps going and going on', html: '<p>Hello <b>there</b></p>\n.\n<p>dot line</p>', text: 'Hello there\n.\nA line with a dot',
  headers_json: JSON.stringify({ 'X-Entity-Ref-ID': 'ref-1', 'List-Unsubscribe': '<https://signer.net/u/1>' }), tags_json: null, topic_id: null,
  template_id: null, template_version: null, message_id: '<0193a5b0-c1d2-7e3f-8a9b-0c1d2e3f4a5b@signer.net>', scheduled_at: null,
  status: 'dispatched', last_event: 'queued', recipients_text: '', recipient_count: 2, content_hash: '', has_unsubscribe: 1, attachment_count: 1,
  created_at: '2026-05-06T10:00:00.000Z', updated_at: '2026-05-06T10:00:00.000Z',
};
const attachment = { id: 'a', email_id: email.id, team_id: 't', idx: 0, filename: 'report.pdf', content_type: 'application/pdf', content_id: null, disposition: 'attachment' as const, size: 2000, content: Buffer.alloc(2000, 7) };

const mailauthVerdict = async (message: Buffer) => {
  const result = await dkimVerify(message, { resolver: async (name) => { if (name !== 's1._domainkey.signer.net') throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' }); return [[record.slice(0, 200), record.slice(200)]]; } });
  return result.results[0];
};

const dkimpyVerdict = (message: Buffer): string => {
  const script = `
import sys, dkim
record = sys.argv[1].encode()
def dnsfunc(name, timeout=5):
    return record if name == b's1._domainkey.signer.net.' or name == b's1._domainkey.signer.net' else None
print('pass' if dkim.verify(sys.stdin.buffer.read(), dnsfunc=dnsfunc) else 'fail')
`;
  return execFileSync('/usr/bin/python3', ['-c', script, record], { input: message }).toString().trim();
};

const signer = dkimSigner();
const unsigned = await composeMessage(email, [attachment]);
const signed = signer.sign(unsigned, key, new Date());

t.test('the composed message: headers, no Bcc, tracking header', async (t) => {
  const head = unsigned.toString().split('\r\n\r\n')[0]!;
  t.match(head, /^Message-ID: <0193a5b0-c1d2-7e3f-8a9b-0c1d2e3f4a5b@signer\.net>$/m);
  t.match(head, /^X-Svc-Email-Id: 0193a5b0/im);
  t.match(head, /^X-Entity-Ref-ID: ref-1$/m);
  t.match(head, /^Reply-To: help@signer\.net$/m);
  t.notMatch(unsigned.toString(), /secret@inbox-two\.net/, 'bcc never appears in the message');
});

t.test('mailauth verifies the signature', async (t) => {
  const verdict = await mailauthVerdict(signed);
  t.equal(verdict?.status.result, 'pass', verdict?.status.comment ?? '');
});

t.test('dkimpy (independent) verifies the signature', async (t) => {
  t.equal(dkimpyVerdict(signed), 'pass');
});

t.test('h= oversigns From, To, Cc, Subject, Date, Message-ID and Reply-To', async (t) => {
  const header = /^DKIM-Signature:(.*?)\r\n(?=\S)/s.exec(signed.toString())![1]!.replace(/\s+/g, '');
  const h = /;h=([^;]+)/.exec(header)![1]!.split(':').map((n) => n.toLowerCase());
  for (const name of oversignedFields.map((n) => n.toLowerCase())) {
    const present = (unsigned.toString().split('\r\n\r\n')[0]!.match(new RegExp(`^${name}:`, 'gim')) ?? []).length;
    t.equal(h.filter((n) => n === name).length, present + 1, `${name} listed once more than it occurs`);
  }
});

t.test('a header added in transit breaks the signature (both verifiers)', async (t) => {
  const tampered = Buffer.concat([Buffer.from('Subject: You won a prize\r\n'), signed]);
  t.not((await mailauthVerdict(tampered))?.status.result, 'pass');
  t.equal(dkimpyVerdict(tampered), 'fail');
  const body = Buffer.from(signed.toString().replace('Hello there', 'Hello thief'));
  t.not((await mailauthVerdict(body))?.status.result, 'pass', 'a changed body fails too');
  t.equal(dkimpyVerdict(body), 'fail');
});

t.test('many messages, one parsed key: every signature verifies', async (t) => {
  for (let i = 0; i < 20; i++) {
    const message = signer.sign(await composeMessage({ ...email, subject: `Message ${i}`, text: `Body ${i}\r\n`, html: null, cc_json: null }, []), key, new Date());
    t.equal((await mailauthVerdict(message))?.status.result, 'pass', `message ${i}`);
  }
});

t.test('a key replaced under the same domain and selector signs at once (the parsed key is not kept)', async (t) => {
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const otherPem = other.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const otherRecord = `v=DKIM1; k=rsa; p=${other.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
  const verdictUnder = async (message: Buffer, txt: string) => (await dkimVerify(message, { resolver: async () => [[txt.slice(0, 200), txt.slice(200)]] })).results[0]?.status.result;
  const plain = await composeMessage({ ...email, html: null, cc_json: null }, []);
  const rotating = dkimSigner();
  t.equal(await verdictUnder(rotating.sign(plain, key, new Date()), record), 'pass', 'the first key');
  const replaced = rotating.sign(plain, { ...key, privateKeyPem: otherPem }, new Date());
  t.equal(await verdictUnder(replaced, otherRecord), 'pass', 'the replacing key signs');
  t.not(await verdictUnder(replaced, record), 'pass', 'not the replaced one');
});

t.test('the parsed keys are bounded: past capacity the oldest goes, and signing still works', async (t) => {
  const small = dkimSigner(2);
  const plain = await composeMessage({ ...email, html: null, cc_json: null }, []);
  for (const domain of ['a.net', 'b.net', 'c.net', 'signer.net']) small.sign(plain, { ...key, domain }, new Date());
  t.equal((await mailauthVerdict(small.sign(plain, key, new Date())))?.status.result, 'pass');
});
