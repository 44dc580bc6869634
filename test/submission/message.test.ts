import t from 'tap';
import { idempotencyKeyOf, submittedMessage } from '../../mta/submission/message.js';
import { rfc822 } from '../helpers/inbound-rig.js';

// A submitted message as the send request it stands for: envelope recipients decide, headers
// carried or not, the body as written, inline parts with their content ids.

const base = { From: 'Acme <hello@sender.net>', Subject: 'Hi', 'Message-ID': '<m1@app.example>', Date: 'Mon, 4 May 2026 10:00:00 +0000' };

t.test('the envelope recipients are the recipients; header addresses keep their place when they are ones', async (t) => {
  const raw = rfc822({ ...base, To: 'Ann <a@x.net>, b@x.net', Cc: 'c@x.net', Bcc: 'd@x.net' }, 'Hello');
  const { input } = await submittedMessage(Buffer.from(raw), ['a@x.net', 'C@x.net', 'd@x.net', 'e@x.net']);
  t.same(input.to, ['Ann <a@x.net>'], 'b@x.net is no envelope recipient: left out');
  t.same(input.cc, ['c@x.net']);
  t.same(input.bcc, ['d@x.net', 'e@x.net'], 'the others go as Bcc');
  t.equal(input.from, 'Acme <hello@sender.net>');
  t.equal(input.text, 'Hello');
  t.equal(input.html, null, 'no HTML made up');
});

t.test('a To header naming no envelope recipient is refused 550 5.6.0', async (t) => {
  const raw = rfc822({ ...base, To: 'undisclosed-recipients:;' }, 'Hello');
  await t.rejects(submittedMessage(Buffer.from(raw), ['a@x.net']), { responseCode: 550, message: /^5\.6\.0 The To header names none of the envelope recipients/ });
  await t.rejects(submittedMessage(Buffer.from(rfc822({ To: 'a@x.net', Subject: 's' }, 'x')), ['a@x.net']), { responseCode: 550, message: /no From address/ });
});

t.test('custom headers are carried unfolded; trace, MIME and svc-owned ones are not; duplicates refused', async (t) => {
  const raw = rfc822({
    ...base, To: 'a@x.net', Received: 'from somewhere', 'X-Campaign': 'spring\r\n  sale', 'List-Unsubscribe': '<https://x.net/u>',
    'MIME-Version': '1.0', 'Content-Type': 'text/plain', 'X-Svc-Email-Id': 'forged', 'Reply-To': 'Desk <desk@sender.net>',
  }, 'Hello');
  const { input } = await submittedMessage(Buffer.from(raw), ['a@x.net']);
  t.same(input.headers, { 'X-Campaign': 'spring sale', 'List-Unsubscribe': '<https://x.net/u>' });
  t.same(input.reply_to, ['Desk <desk@sender.net>']);
  const twice = `X-Tag: one\r\n${rfc822({ ...base, To: 'a@x.net', 'X-Tag': 'two' }, 'Hello')}`;
  await t.rejects(submittedMessage(Buffer.from(twice), ['a@x.net']), { responseCode: 550, message: /The X-Tag header is given twice/ });
});

t.test('HTML keeps its cid: references; inline parts travel with their content ids', async (t) => {
  const png = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
  const raw = rfc822({ ...base, To: 'a@x.net', 'MIME-Version': '1.0', 'Content-Type': 'multipart/related; boundary="b1"' }, [
    '--b1', 'Content-Type: text/html; charset=utf-8', '', '<p><img src="cid:logo@x"></p>',
    '--b1', 'Content-Type: image/png', 'Content-Transfer-Encoding: base64', 'Content-ID: <logo@x>', 'Content-Disposition: inline; filename="logo.png"', '', png,
    '--b1--', '',
  ].join('\n'));
  const { input } = await submittedMessage(Buffer.from(raw), ['a@x.net']);
  t.match(input.html, /src="cid:logo@x"/);
  t.equal(input.text, null);
  t.same(input.attachments, [{ content: png, filename: 'logo.png', content_type: 'image/png', content_id: 'logo@x' }]);
});

t.test('the idempotency key: Message-ID and the recipients, whatever their order and case', async (t) => {
  const key = idempotencyKeyOf('<m1@app.example>', ['a@x.net', 'B@x.net']);
  t.match(key, /^smtp:[0-9a-f]{64}$/);
  t.equal(idempotencyKeyOf('<m1@app.example>', ['b@x.net', 'a@x.net']), key);
  t.not(idempotencyKeyOf('<m1@app.example>', ['a@x.net']), key, 'other recipients: another send');
  t.not(idempotencyKeyOf('<m2@app.example>', ['a@x.net', 'b@x.net']), key);
  t.equal(idempotencyKeyOf(undefined, ['a@x.net']), undefined, 'no Message-ID: no key');
});
