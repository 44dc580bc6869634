import t from 'tap';
import { returnPaths as signer } from '../../core/emails/return-path.js';
import { changeRecipient, recipientById } from '../../storage/repos/index.js';
import { receivedRepo } from '../../storage/repos/index.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { startInboundRig } from '../helpers/inbound-rig.js';
import { fixture, values } from '../helpers/received-fixtures.js';

// Reports that come back for mail svc sent, over SMTP to the inbound listener: DSNs at the VERP
// return path and ARF reports at the feedback address produce the right events and suppressions
// against the exact email and recipient.
const rig = await startInboundRig();
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Sender');
const sendingDomains = fakeSendingDomains(rig.app, rig.dns);
sendingDomains.add({ teamId: team.teamId, name: 'sender.net' });
rig.dns.set('mailbox-provider.net', [{ type: 'MX', exchange: 'mx.mailbox-provider.net', priority: 10 }]);
rig.dns.set('mx.mailbox-provider.net', [{ type: 'A', value: '192.0.2.30' }]);
const db = rig.app.appliance.services.database.db;
const returnPaths = rig.app.appliance.services.sending.returnPaths;
const returnPath = (recipientId: string) => returnPaths.address(recipientId, 'send.sender.net', new Date());

let counter = 0;
/** A fresh email to a fresh address; answers what a report about it names. */
async function sentEmail(token = team.token) {
  const recipient = `person${++counter}@mailbox-provider.net`;
  const r = await rig.api(token, 'POST', '/emails', { from: 'Sender <hello@sender.net>', to: recipient, subject: 'Welcome', text: `Hello number ${counter}!` });
  t.equal(r.status, 200, 'the send is accepted');
  const emailId: string = r.body.id;
  const email = await rig.api(token, 'GET', `/emails/${emailId}`);
  const recipientId = `${emailId}.0`;
  return { emailId, recipientId, recipient, messageId: email.body.message_id as string, verp: returnPath(recipientId) };
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

// The attacks these tags close, replayed as a recipient of one message would: it knows the email id
// (the Message-ID and X-Svc-Email-Id it received), its own signed return path, and the other
// recipients it can see.
const hexOf = (emailId: string) => emailId.split('-').join('');
const unsigned = (emailId: string, index: number) => `bounces+${hexOf(emailId)}-${index}@send.sender.net`;
const refusedAtRcpt = async (to: string, raw: Buffer) => {
  const err = await rig.send({ from: '', to: [to] }, raw).then(() => undefined, (e: { response?: string }) => e);
  return err?.response ?? 'accepted';
};

t.test('a forged DSN for another recipient of the same email is refused at RCPT', async (t) => {
  const r = await rig.api(team.token, 'POST', '/emails', {
    from: 'Sender <hello@sender.net>', to: 'to-1@mailbox-provider.net', cc: 'cc-1@mailbox-provider.net', bcc: 'bcc-1@mailbox-provider.net', subject: 'Hi', text: 'Three recipients',
  });
  const emailId = r.body.id as string;
  const mine = returnPath(`${emailId}.0`);
  const bcc = { verp: unsigned(emailId, 2), recipient: 'bcc-1@mailbox-provider.net', messageId: `<${emailId}@sender.net>` };
  t.match(await refusedAtRcpt(bcc.verp, fixture('postfix-user-unknown.eml', fill(bcc))), /^550 5\.7\.1 /, 'the unsigned form is refused');
  const myTag = mine.slice(mine.indexOf('-0-') + 3, mine.indexOf('@'));
  const reused = `bounces+${hexOf(emailId)}-2-${myTag}@send.sender.net`;
  t.match(await refusedAtRcpt(reused, fixture('postfix-user-unknown.eml', fill({ ...bcc, verp: reused }))), /^550 5\.7\.1 /, "one recipient's tag does not sign another index");
  const flipped = mine.replace(/[0-9a-f](?=@)/, (c) => (c === '0' ? '1' : '0'));
  t.match(await refusedAtRcpt(flipped, fixture('postfix-user-unknown.eml', fill({ ...bcc, verp: flipped }))), /^550 5\.7\.1 /, 'an altered tag is refused');
  t.equal(await suppression('bcc-1@mailbox-provider.net'), undefined, 'the bcc recipient is not suppressed');
  t.equal((await eventsFor('email.bounced', emailId)).length, 0);
});

t.test("a forged ARF naming another recipient's return path changes nothing", async (t) => {
  const r = await rig.api(team.token, 'POST', '/emails', { from: 'Sender <hello@sender.net>', to: ['arf-a@mailbox-provider.net', 'arf-b@mailbox-provider.net'], subject: 'Hi', text: 'Two recipients' });
  const emailId = r.body.id as string;
  const other = { verp: unsigned(emailId, 1), recipient: 'arf-b@mailbox-provider.net', messageId: `<${emailId}@sender.net>` };
  t.match((await rig.send({ from: 'arf-a@mailbox-provider.net', to: [values.FEEDBACK] }, fixture('arf-abuse.eml', fill(other)))).response, /^250 /);
  t.equal((await eventsFor('email.complained', emailId)).length, 0, 'no complaint: the Message-ID and address are not enough');
  t.equal(await suppression('arf-b@mailbox-provider.net'), undefined);
  t.match(await receivedRepo(db).reportsOf(emailId), [], 'recorded only as unmatched');
});

t.test("one team's forged reports never refuse another team's sends", async (t) => {
  const rival = await rig.app.newTeam('Rival');
  sendingDomains.add({ teamId: rival.teamId, name: 'rival.net' });
  const victim = 'victim@mailbox-provider.net';
  const r = await rig.api(rival.token, 'POST', '/emails', { from: 'Rival <x@rival.net>', to: victim, subject: 'Hi', text: 'From the rival' });
  const emailId = r.body.id as string;
  // The rival can read its own signed return path (say, from a copy sent to itself) and report a 5.1.1 on it.
  const own = { verp: returnPaths.address(`${emailId}.0`, 'send.rival.net', new Date()), recipient: victim, messageId: `<${emailId}@rival.net>` };
  t.match((await rig.send({ from: '', to: [own.verp] }, fixture('postfix-user-unknown.eml', fill(own)))).response, /^250 /);
  t.equal((await eventsFor('email.bounced', emailId)).length, 1, "the report counts for the rival's own recipient");
  const next = await rig.api(team.token, 'POST', '/emails', { from: 'Sender <hello@sender.net>', to: victim, subject: 'Hi', text: 'From another team' });
  t.same([next.status, next.body.message], [200, undefined], 'another team still sends to the address: reports are no evidence of a dead mailbox');
});

t.test('return paths minted before tags existed: honoured for older mail within its retry window', async (t) => {
  const e = await sentEmail();
  const legacy = unsigned(e.emailId, 0);
  t.match(await refusedAtRcpt(legacy, fixture('postfix-delayed.eml', fill({ ...e, verp: legacy }))), /^550 5\.7\.1 /, 'mail sent after the upgrade has no unsigned return path');
  const sentAt = parseInt(hexOf(e.emailId).slice(0, 12), 16);
  const checkAt = (since: number, now: number) =>
    returnPathsWith(since).check(legacy, new Date(now));
  t.match(await checkAt(sentAt + 1, sentAt + 3_600_000), { ok: true, recipientId: e.recipientId }, 'older mail, within 72 hours');
  t.match(await checkAt(sentAt + 1, sentAt + 73 * 3_600_000), { ok: false }, 'older mail, past its retry window');
});

const returnPathsWith = (since: number) => signer({ key: Buffer.alloc(32), signedSince: async () => new Date(since), retryWindowMs: 72 * 3_600_000 });
