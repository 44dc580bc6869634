import t from 'tap';
import { verpAddress } from '../../core/emails/verp.js';
import { changeRecipient, recipientById } from '../../storage/emails-queue.js';
import { receivedRepo } from '../../storage/received.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { startInboundRig } from '../helpers/inbound-rig.js';
import { fixture, values } from '../helpers/received-fixtures.js';

// Reports that come back for mail svc sent, over SMTP to the inbound listener: DSNs at the VERP
// return path and ARF reports at the feedback address produce the right events and suppressions
// against the exact email and recipient.
const rig = await startInboundRig();
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Sender');
fakeSendingDomains(rig.app, rig.dns).add({ teamId: team.teamId, name: 'sender.net' });
rig.dns.set('mailbox-provider.net', [{ type: 'MX', exchange: 'mx.mailbox-provider.net', priority: 10 }]);
rig.dns.set('mx.mailbox-provider.net', [{ type: 'A', value: '192.0.2.30' }]);
const db = rig.app.appliance.services.database.db;

let counter = 0;
/** A fresh email to a fresh address; answers what a report about it names. */
async function sentEmail() {
  const recipient = `person${++counter}@mailbox-provider.net`;
  const r = await rig.api(team.token, 'POST', '/emails', { from: 'Sender <hello@sender.net>', to: recipient, subject: 'Welcome', text: 'Hello!' });
  t.equal(r.status, 200, 'the send is accepted');
  const emailId: string = r.body.id;
  const email = await rig.api(team.token, 'GET', `/emails/${emailId}`);
  const recipientId = `${emailId}.0`;
  return { emailId, recipientId, recipient, messageId: email.body.message_id as string, verp: verpAddress(recipientId, 'send.sender.net') };
}

const fill = (e: { verp: string; recipient: string; messageId: string }) => ({ VERP: e.verp, RECIPIENT: e.recipient, MESSAGE_ID: e.messageId, FEEDBACK: values.FEEDBACK });
const eventsFor = async (type: string, emailId: string) => (await rig.events(type)).filter((e) => e.data.email_id === emailId);
const suppression = async (address: string) =>
  (await rig.api(team.token, 'GET', `/suppressions?search=${encodeURIComponent(address)}`)).body.data.find((s: { email: string }) => s.email === address);

t.test('a permanent DSN at the VERP address: email.bounced and a bounce suppression', async (t) => {
  const e = await sentEmail();
  const sent = await rig.send({ from: '', to: [e.verp] }, fixture('postfix-user-unknown.eml', fill(e)));
  t.match(sent.response, /^250 /);
  const bounced = await eventsFor('email.bounced', e.emailId);
  t.equal(bounced.length, 1);
  t.match(bounced[0]!.data, { to: [e.recipient], bounce: { type: 'Permanent', subType: 'NoEmail', diagnosticCode: [/^550 5\.1\.1 /] } });
  t.match(await suppression(e.recipient), { origin: 'bounce', source_id: e.emailId });
  t.equal((await rig.api(team.token, 'GET', `/emails/${e.emailId}`)).body.last_event, 'bounced');
  const reports = await receivedRepo(db).reportsOf(e.emailId);
  t.match(reports, [{ kind: 'dsn', outcome: 'bounced', team_id: team.teamId, recipient: e.recipient }]);
  t.equal((await rig.api(team.token, 'GET', '/emails/receiving?limit=100')).body.data.length, 0, 'a DSN is not received mail');

  await rig.send({ from: '', to: [e.verp] }, fixture('postfix-user-unknown.eml', fill(e)));
  t.equal((await eventsFor('email.bounced', e.emailId)).length, 1, 'the same DSN again adds no second bounce');
});

t.test('a transient failure (mailbox full): email.bounced Transient, no suppression', async (t) => {
  const e = await sentEmail();
  await rig.send({ from: '', to: [e.verp] }, fixture('gmail-over-quota.eml', fill(e)));
  t.match((await eventsFor('email.bounced', e.emailId))[0]?.data, { bounce: { type: 'Transient', subType: 'MailboxFull' } });
  t.equal(await suppression(e.recipient), undefined);
});

t.test('a delay notice: email.delivery_delayed, nothing suppressed, nothing resent', async (t) => {
  const e = await sentEmail();
  await rig.send({ from: '', to: [e.verp] }, fixture('postfix-delayed.eml', fill(e)));
  const delayed = await eventsFor('email.delivery_delayed', e.emailId);
  t.equal(delayed.length, 1);
  t.match(delayed[0]!.data, { delay: { type: 'TransientCommunicationFailure', expirationTime: '2026-11-27T08:42:20.000Z', delayedRecipients: [e.recipient] } });
  t.equal(await suppression(e.recipient), undefined);
  t.equal((await recipientById(db, e.recipientId))?.state, 'queued', 'the recipient state is not touched by a delay');
});

t.test('a DSN settles an ambiguous submission', async (t) => {
  const e = await sentEmail();
  const at = new Date().toISOString();
  t.ok(await changeRecipient(db, e.recipientId, ['queued'], { state: 'ambiguous', submitted_at: at }, at), 'the submission is ambiguous');
  await rig.send({ from: '', to: [e.verp] }, fixture('postfix-delayed.eml', fill(e)));
  t.equal((await recipientById(db, e.recipientId))?.state, 'delivered', 'the remote side had it: no longer ambiguous');
  t.equal((await eventsFor('email.delivery_delayed', e.emailId)).length, 1);

  const f = await sentEmail();
  await changeRecipient(db, f.recipientId, ['queued'], { state: 'ambiguous', submitted_at: at }, at);
  await rig.send({ from: '', to: [f.verp] }, fixture('exchange-online-not-found.eml', fill(f)));
  t.equal((await recipientById(db, f.recipientId))?.state, 'bounced', 'a failure DSN settles it as bounced');
});

t.test('a DSN whose VERP names no recipient falls back to the returned Message-ID', async (t) => {
  const e = await sentEmail();
  const stray = verpAddress(`${e.emailId}.7`, 'send.sender.net');
  await rig.send({ from: '', to: [stray] }, fixture('qmail-text-bounce.eml', { ...fill(e), VERP: stray }));
  t.equal((await eventsFor('email.bounced', e.emailId)).length, 0, 'qmail returns no MIME part: nothing to fall back on');
  await rig.send({ from: '', to: [stray] }, fixture('exchange-online-not-found.eml', { ...fill(e), VERP: stray }));
  t.match(await eventsFor('email.bounced', e.emailId), [{ data: { to: [e.recipient], bounce: { type: 'Permanent' } } }], 'found by Message-ID and recipient');
});

t.test('an auto-reply to a return path is recorded as unparsed and changes nothing', async (t) => {
  const e = await sentEmail();
  t.match((await rig.send({ from: 'ann@mailbox-provider.net', to: [e.verp] }, fixture('vacation-auto-reply.eml', fill(e)))).response, /^250 /);
  t.equal((await eventsFor('email.bounced', e.emailId)).length + (await eventsFor('email.delivery_delayed', e.emailId)).length, 0);
});

t.test('an ARF complaint at the feedback address: email.complained and a complaint suppression', async (t) => {
  const e = await sentEmail();
  const sent = await rig.send({ from: 'feedback-sender@fbl.mailbox.example', to: [values.FEEDBACK] }, fixture('arf-abuse.eml', fill(e)));
  t.match(sent.response, /^250 /);
  t.match(await eventsFor('email.complained', e.emailId), [{ data: { email_id: e.emailId, to: [e.recipient] } }]);
  t.match(await suppression(e.recipient), { origin: 'complaint', source_id: e.emailId });
  t.match(await receivedRepo(db).reportsOf(e.emailId), [{ kind: 'arf', outcome: 'complained' }]);
});

t.test('a redacted ARF report is matched through the returned Return-Path', async (t) => {
  const e = await sentEmail();
  await rig.send({ from: 'fbl@complaints.mailbox.example', to: [values.FEEDBACK] }, fixture('arf-redacted.eml', fill(e)));
  t.equal((await eventsFor('email.complained', e.emailId)).length, 1);
  t.match(await suppression(e.recipient), { origin: 'complaint' });
});
