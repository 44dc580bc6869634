import t from 'tap';
import MailComposer from 'nodemailer/lib/mail-composer';
import { composeMessage, composerOptions } from '../../mta/outbound/compose.js';
import type { EmailAttachmentRow, EmailRow } from '../../storage/repos/index.js';

// The composer is told the transfer encoding up front when the choice is plain (7-bit headers and
// bodies with a Latin letter), so it skips counting characters. The message must be byte for byte
// what nodemailer builds when left to choose: checked here against nodemailer itself, given the
// same options without the hint, over plain mail and over every case the hint must stay out of.

const base: EmailRow = {
  id: '0193a5b0-c1d2-7e3f-8a9b-0c1d2e3f4a5b', team_id: 't', api_key_id: null, domain_id: 'd', region: 'us-east-1',
  from_header: 'Acme News <news@acme.net>', from_email: 'news@acme.net',
  to_json: JSON.stringify([{ header: 'ann@inbox-one.net', address: 'ann@inbox-one.net' }]),
  cc_json: null, bcc_json: null, reply_to_json: null,
  subject: 'Your weekly news', html: null, text: 'The quick brown fox jumps over the lazy dog. '.repeat(90).slice(0, 4000),
  headers_json: null, tags_json: null, topic_id: null, template_id: null, template_version: null,
  message_id: '<0193a5b0-c1d2-7e3f-8a9b-0c1d2e3f4a5b@acme.net>', scheduled_at: null, status: 'dispatched', last_event: 'queued',
  recipients_text: '', recipient_count: 1, content_hash: '', has_unsubscribe: 0, attachment_count: 0,
  created_at: '2026-05-06T10:00:00.000Z', updated_at: '2026-05-06T10:00:00.000Z',
};

const textAttachment: EmailAttachmentRow = {
  id: 'a', email_id: base.id, team_id: 't', idx: 0, filename: 'list.csv', content_type: 'text/csv', content_id: null,
  disposition: 'attachment', size: 24, content: Buffer.from('Имя,Город\nАнна,Москва\n'),
};

/** nodemailer's own choice: the same options, without the hint. */
const reference = (email: EmailRow, attachments: EmailAttachmentRow[] = []) =>
  new MailComposer(composerOptions(email, attachments).mail).compile().build();

/** Boundaries are random per build: each is replaced by its order of first appearance. */
function sameBoundaries(message: Buffer): string {
  const text = message.toString('latin1');
  const boundaries = [...new Set([...text.matchAll(/boundary="([^"]+)"/g)].map((m) => m[1]!))];
  return boundaries.reduce((out, b, i) => out.split(b).join(`BOUNDARY-${i}`), text);
}

const cases: [string, Partial<EmailRow>, EmailAttachmentRow[]?][] = [
  ['plain text, one long line', {}],
  ['text and HTML, short lines', { text: 'Hello Ann,\nyour news.\n', html: '<p>Hello <b>Ann</b>, your news.</p>' }],
  ['a name with punctuation, Cc, Reply-To and custom headers', {
    from_header: '"O\'Brien, Ann" <ann@acme.net>', cc_json: JSON.stringify([{ header: 'Bob <bob@inbox-two.net>' }]),
    reply_to_json: JSON.stringify([{ header: 'help@acme.net' }]), headers_json: JSON.stringify({ 'X-Entity-Ref-ID': 'ref-1', 'List-Unsubscribe': '<https://acme.net/u/1>' }),
  }],
  ['an 8-bit subject (left to nodemailer)', { subject: 'Grüße aus Köln' }],
  ['a mostly non-Latin body (left to nodemailer: base64)', { text: 'Привет! Это новости недели. '.repeat(40) }],
  ['a body without a Latin letter (left to nodemailer)', { text: '1234 5678 '.repeat(50) }],
  ['a control character in the body (left to nodemailer)', { text: `Hello\u0007 there ${'x'.repeat(100)}` }],
  ['a text attachment (left to nodemailer)', {}, [textAttachment]],
];

for (const [name, change, attachments] of cases) {
  t.test(name, async (t) => {
    const email = { ...base, ...change };
    const ours = sameBoundaries(await composeMessage(email, attachments ?? []));
    t.equal(ours, sameBoundaries(await reference(email, attachments)), 'byte for byte what nodemailer builds');
  });
}

t.test('the hint is given for plain mail and only there', async (t) => {
  const { mail } = composerOptions(base, []);
  t.notOk('textEncoding' in mail, 'the options themselves carry no hint');
  t.match((await composeMessage(base, [])).toString(), /Content-Transfer-Encoding: quoted-printable/, 'a long 7-bit line is quoted-printable');
  const cyrillic = await composeMessage({ ...base, text: 'Привет! Это новости недели. '.repeat(40) }, []);
  t.match(cyrillic.toString(), /Content-Transfer-Encoding: base64/, 'mostly non-Latin text stays base64');
});
