import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { emailsRepo } from '../../storage/repos/index.js';
import { waitFor } from '../helpers/deadline.js';
import { eventsOf } from '../helpers/email-fixtures.js';
import { call } from '../helpers/http.js';
import { startSubmissionRig } from '../helpers/submission-rig.js';

// SMTP submission end to end, with real clients (nodemailer, swaks): login with an API key, the
// message through the API's send path, GET /emails/{id}, delivery to the recipient's MX with a
// DKIM signature that verifies, and a client's retry of one Message-ID sent once.
const rig = await startSubmissionRig();
t.teardown(() => rig.stop());
const { app, mx } = rig;
const team = await app.newTeam('Submitter');
rig.domains.add({ teamId: team.teamId, name: 'sender.net' });
const get = async (id: string) => (await call(app.baseUrl, 'GET', `/emails/${id}`, { token: team.token })).body;
const deliveredTo = (address: string) => waitFor(`a delivery to ${address}`, async () => mx.received.find((m) => m.rcptTo === address));

t.test('nodemailer over 587 with STARTTLS: 250 names the email, which is delivered DKIM-signed', async (t) => {
  const info = await rig.transport(team.token).sendMail({
    from: 'Acme <hello@sender.net>', to: 'Ann <ann@inbox-one.net>', cc: 'carl@inbox-one.net', bcc: 'hidden@inbox-one.net',
    subject: 'Over SMTP', text: 'Hello over SMTP', html: '<p>Hello over <b>SMTP</b></p>',
    headers: { 'X-Campaign': 'welcome' }, attachments: [{ filename: 'note.txt', content: 'an attachment' }],
  });
  const id = rig.queuedId(info.response);
  const email = await get(id);
  t.match(email, {
    id, from: 'Acme <hello@sender.net>', to: ['Ann <ann@inbox-one.net>'], cc: ['carl@inbox-one.net'], bcc: ['hidden@inbox-one.net'],
    subject: 'Over SMTP', text: 'Hello over SMTP',
  });
  t.match(email.html, /Hello over <b>SMTP<\/b>/);
  const stored = await emailsRepo(app.appliance.services.database.db).byId(team.teamId, id);
  t.equal(stored?.api_key_id, team.keyId, 'recorded under the key that logged in');
  const message = await deliveredTo('ann@inbox-one.net');
  t.equal(message.dkim, 'pass', 'the DKIM signature verifies against the published key');
  t.equal(message.dkimDomain, 'sender.net');
  t.equal(message.messageId, `<${id}@sender.net>`);
  const raw = message.raw.toString();
  t.match(raw, /^X-Campaign: welcome\r$/m, 'a custom header is carried');
  t.match(raw, /filename=note\.txt/, 'the attachment is carried');
  t.notMatch(raw, /hidden@inbox-one\.net/, 'the Bcc recipient is named in no header');
  const hidden = await deliveredTo('hidden@inbox-one.net');
  t.equal(hidden.dkim, 'pass', 'the Bcc recipient gets the message too');
  await deliveredTo('carl@inbox-one.net');
  await waitFor(`${id} delivered`, async () => (await get(id)).last_event === 'delivered');
  const events = (await eventsOf(app, id)).map((e) => e.type);
  t.ok(events.includes('email.sent') && events.includes('email.delivered'), 'the same events as an API send');
});

t.test('nodemailer over 465 with implicit TLS', async (t) => {
  const info = await rig.transport(team.token, { implicitTls: true }).sendMail({
    from: 'hello@sender.net', to: 'ida@inbox-one.net', subject: 'Implicit TLS', text: 'Over 465',
  });
  const id = rig.queuedId(info.response);
  t.match(await get(id), { id, to: ['ida@inbox-one.net'], subject: 'Implicit TLS' });
  const message = await deliveredTo('ida@inbox-one.net');
  t.equal(message.dkim, 'pass');
  t.equal(message.secure, true);
});

t.test('a retry of one Message-ID to the same recipients is sent once', async (t) => {
  const mail = { from: 'hello@sender.net', to: 'rita@inbox-one.net', subject: 'Retried', text: 'Once only', messageId: '<retry-1@app.example>' };
  const first = rig.queuedId((await rig.transport(team.token).sendMail(mail)).response);
  const again = rig.queuedId((await rig.transport(team.token, { implicitTls: true }).sendMail(mail)).response);
  t.equal(again, first, 'the retry hears the first id');
  const other = rig.queuedId((await rig.transport(team.token).sendMail({ ...mail, to: 'otto@inbox-one.net' })).response);
  t.not(other, first, 'the same Message-ID to other recipients is another message');
  await deliveredTo('otto@inbox-one.net');
  await deliveredTo('rita@inbox-one.net');
  const db = app.appliance.services.database.db;
  const rows = await db.selectFrom('emails').select('id').where('team_id', '=', team.teamId).where('subject', '=', 'Retried').execute();
  t.equal(rows.length, 2, 'two emails recorded, not three');
  t.equal(mx.received.filter((m) => m.rcptTo === 'rita@inbox-one.net').length, 1, 'delivered once');
});

const swaks = '/usr/bin/swaks';
t.test('swaks over 587 with --tls and --auth', { skip: existsSync(swaks) ? false : 'swaks is not installed (scripts/setup.sh installs it)' }, async (t) => {
  const run = await promisify(execFile)(swaks, [
    '--server', `127.0.0.1:${rig.port}`, '--tls', '--auth', 'PLAIN', '--auth-user', 'resend', '--auth-password', team.token,
    '--from', 'hello@sender.net', '--to', 'sam@inbox-one.net', '--header', 'Subject: From swaks', '--body', 'Sent by swaks',
  ], { timeout: 30_000 });
  const id = /<~\s+250 2\.0\.0 Ok: queued as ([0-9a-f-]{36})/.exec(run.stdout)?.[1];
  t.ok(id, 'swaks hears 250 with the id');
  t.match(await get(id!), { subject: 'From swaks', to: ['sam@inbox-one.net'] });
  t.equal((await deliveredTo('sam@inbox-one.net')).dkim, 'pass');
  t.match(run.stdout, /~> AUTH PLAIN/, 'logged in inside TLS');
});
