import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentHashOf, consentRecords, platformEvents, teamEvents } from '../helpers/audience.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// Rule 4 end to end: mail is sent through the outbound role to a fake MX; each delivered
// recipient who is not a contact becomes a never_subscribed one — never a bounced, suppressed or
// erased address, never a change to a contact that exists, never a contact.* event, and not when
// the team switched it off. The MX holds each reply 1.5 s so an address can be suppressed while
// its message is on the wire. Rule 7's limit (2 here) does not count contacts added from sends.
const dns = await mailZone();
const mx = await startFakeMx({ replyDelayMs: 1500 });
const app = await startTestAppliance({
  roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_CONTACTS_LIMIT: '2' },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); });
const base = app.baseUrl;
const db = app.appliance.services.database.db;
const domains = fakeSendingDomains(app, dns);

async function teamWithDomain(name: string) {
  const team = await app.newTeam(name);
  const domain = `${name.toLowerCase().replace(/\W+/g, '-')}.net`;
  domains.add({ teamId: team.teamId, name: domain });
  const send = async (body: Record<string, unknown>) => {
    const r = await call(base, 'POST', '/emails', { token: team.token, body: { from: `hi@${domain}`, subject: 'Hello', text: 'Hi', ...body } });
    if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
    return r.body.id as string;
  };
  return { ...team, send };
}

const settled = (token: string, id: string, ...events: string[]) => waitFor(`${id} to reach ${events.join('/')}`, async () => {
  const e = (await call(base, 'GET', `/emails/${id}`, { token })).body.last_event as string;
  return events.includes(e) ? e : undefined;
});
const contactRow = (teamId: string, email: string) =>
  db.selectFrom('contacts').selectAll().where('team_id', '=', teamId).where('email_key', '=', email.toLowerCase()).executeTakeFirst();

t.test('delivered recipients join as never_subscribed; the exclusions never do', async (t) => {
  const team = await teamWithDomain('Sender one');
  const existing = await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'kept@inbox-one.net', first_name: 'Kept', unsubscribed: true } });
  const keptBefore = await contactRow(team.teamId, 'kept@inbox-one.net');
  await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'erased@inbox-one.net' } });
  t.equal((await call(base, 'DELETE', '/contacts/erased@inbox-one.net', { token: team.token })).status, 200);
  mx.script.set('nobody@inbox-one.net', { kind: 'rcpt', reply: '550 5.1.1 <nobody@inbox-one.net>: Recipient address rejected: User unknown' });
  const eventsBefore = (await teamEvents(app, team.teamId, 'contact.')).length;

  const sent = await Promise.all([
    team.send({ to: 'New.One@inbox-one.net', cc: 'new2@inbox-two.net', bcc: 'new3@inbox-two.net' }),
    team.send({ to: 'kept@inbox-one.net' }),
    team.send({ to: 'erased@inbox-one.net' }),
    team.send({ to: 'nobody@inbox-one.net' }),
  ]);
  const late = await team.send({ to: 'late@inbox-one.net' });
  await waitFor('late@ to be on the wire', async () => (await db.selectFrom('email_recipients').select('state').where('email_id', '=', late).executeTakeFirst())?.state === 'submitting');
  t.equal((await call(base, 'POST', '/suppressions', { token: team.token, body: { email: 'late@inbox-one.net' } })).status, 201);
  for (const id of [...sent.slice(0, 3), late]) await settled(team.token, id, 'delivered');
  await settled(team.token, sent[3]!, 'bounced');
  t.equal(mx.received.filter((m) => m.rcptTo === 'late@inbox-one.net').length, 1, 'late@ was delivered all the same');

  for (const address of ['new.one@inbox-one.net', 'new2@inbox-two.net', 'new3@inbox-two.net']) {
    const row = await contactRow(team.teamId, address);
    t.match(row, { email: address, first_name: null, last_name: null, subscription_status: 'never_subscribed', origin: 'sends' }, `${address} joined`);
  }
  const shown = await call(base, 'GET', '/contacts/New.One@inbox-one.net', { token: team.token });
  t.match(shown.body, { email: 'new.one@inbox-one.net', unsubscribed: false, subscription_status: 'never_subscribed', properties: {} });
  for (const address of ['erased@inbox-one.net', 'nobody@inbox-one.net', 'late@inbox-one.net']) {
    t.equal(await contactRow(team.teamId, address), undefined, `${address} never joins`);
  }
  t.same(await contactRow(team.teamId, 'kept@inbox-one.net'), keptBefore, 'an existing contact is never changed');
  t.equal(existing.body.id, keptBefore!.id);
  t.equal((await teamEvents(app, team.teamId, 'contact.')).length, eventsBefore, 'no contact.* event for contacts from sends');
  t.notOk((await platformEvents(app, team.teamId)).some((e) => e.contact_id === shown.body.id), 'nor a platform event');
  const trail = (await consentRecords(app, team.teamId)).filter((r) => r.contact_id === shown.body.id);
  t.match(trail, [{ kind: 'subscription', value: 'never_subscribed', source: 'sends', ip: null, user_agent: null, email_hash: consentHashOf(app, 'new.one@inbox-one.net') }]);

  const simulator = `delivered@${app.config.mailbox_simulator_domain}`;
  await Promise.all([team.send({ to: 'new.one@inbox-one.net' }), team.send({ to: simulator })].map(async (id) => settled(team.token, await id, 'delivered')));
  t.equal(await contactRow(team.teamId, simulator), undefined, 'the mailbox simulator\'s addresses never join');
  const count = await db.selectFrom('contacts').select((eb) => eb.fn.countAll<number>().as('n')).where('team_id', '=', team.teamId).executeTakeFirst();
  t.equal(Number(count?.n), 4, 'a second delivery adds nothing: kept, new.one, new2, new3');
});

t.test('audience_from_sends off: delivered recipients stay out', async (t) => {
  const team = await teamWithDomain('Sender off');
  await db.updateTable('teams').set({ audience_from_sends: 0 }).where('id', '=', team.teamId).execute();
  const id = await team.send({ to: 'quiet@inbox-one.net' });
  await settled(team.token, id, 'delivered');
  t.equal(await contactRow(team.teamId, 'quiet@inbox-one.net'), undefined);
  const other = await teamWithDomain('Sender on');
  const on = await other.send({ to: 'quiet@inbox-one.net' });
  await settled(other.token, on, 'delivered');
  t.match(await contactRow(other.teamId, 'quiet@inbox-one.net'), { origin: 'sends' }, "another team's switch is its own");
});

t.test('rule 7: past the limit a create is 422 Contact limit reached; contacts from sends are not counted', async (t) => {
  const team = await teamWithDomain('Sender limit');
  const ids = await Promise.all(['a@inbox-one.net', 'b@inbox-one.net', 'c@inbox-one.net'].map((to) => team.send({ to })));
  for (const id of ids) await settled(team.token, id, 'delivered');
  t.equal((await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'first@example.com' } })).status, 201, 'three contacts from sends, none counted');

  const promoted = await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'A@inbox-one.net', first_name: 'Ada', unsubscribed: true } });
  t.equal(promoted.status, 201);
  const a = await contactRow(team.teamId, 'a@inbox-one.net');
  t.equal(promoted.body.id, a!.id, 'the contact keeps its id');
  t.match(a, { email: 'A@inbox-one.net', first_name: 'Ada', subscription_status: 'unsubscribed', origin: 'api' }, 'treated as new: the caller\'s fields and status');
  const created = (await teamEvents(app, team.teamId, 'contact.')).filter((e) => e.type === 'contact.created').map((e) => e.data.id);
  t.ok(created.includes(a!.id), 'with a contact.created event');
  t.ok((await platformEvents(app, team.teamId)).some((e) => e.type === 'svc:contact.created' && e.contact_id === a!.id));

  const refused = await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'third@example.com' } });
  t.equal(refused.status, 422);
  t.same(refused.body, { statusCode: 422, name: 'validation_error', message: 'Contact limit reached.' });
  const promote = await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'b@inbox-one.net' } });
  t.equal(promote.status, 422, 'a contact from sends made a real one counts too');
  t.equal(promote.body.message, 'Contact limit reached.');
  t.equal((await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'first@example.com', first_name: 'F' } })).status, 201, 'a repeat create at the limit is an update');
  t.equal((await call(base, 'DELETE', '/contacts/first@example.com', { token: team.token })).status, 200);
  t.equal((await call(base, 'POST', '/contacts', { token: team.token, body: { email: 'third@example.com' } })).status, 201, 'erasure frees a place');
});
