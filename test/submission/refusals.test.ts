import t from 'tap';
import { rawSmtp } from '../helpers/raw-smtp.js';
import { ehloAroundStartTls, startSubmissionRig } from '../helpers/submission-rig.js';

// What SMTP submission refuses, and how it says so: no AUTH before TLS, wrong keys (535, logged
// without the password, rate-limited per client address), a pinned key's other domains, an
// unverified From domain, and the team's daily cap — spent atomically by the API's own send path,
// answered 450 4.7.0 (temporary: the cap resets at 00:00 UTC).
const lines: string[] = [];
const plans = JSON.stringify([{ code: 'capped', name: 'Capped', limits: { daily_cap: 3 } }]);
const rig = await startSubmissionRig(
  { SVC_LOG_LEVEL: 'info', SVC_PLANS: plans, SVC_SUBMISSION_AUTH_FAILURE_BURST: '3', SVC_SUBMISSION_AUTH_FAILURE_REFILL_S: '3600' },
  { write: (line) => { lines.push(line); } },
);
t.teardown(() => rig.stop());
const { app } = rig;
const team = await app.newTeam('Refused');
const sender = rig.domains.add({ teamId: team.teamId, name: 'sender.net' });
const other = rig.domains.add({ teamId: team.teamId, name: 'other-sender.net' });
const refusal = async (promise: Promise<unknown>) => {
  const err = await promise.then(() => undefined, (e: Error & { responseCode?: number; response?: string }) => e);
  if (!err) throw new Error('the server accepted what it should have refused');
  return { code: err.responseCode, response: err.response ?? err.message };
};

t.test('587: EHLO offers STARTTLS and no AUTH before TLS, AUTH after it', async (t) => {
  const { before, starttls, after } = await ehloAroundStartTls(rig.port);
  t.match(before, /STARTTLS/);
  t.notMatch(before, /AUTH/, 'no AUTH offered in the clear');
  t.match(starttls, /^220 /);
  t.match(after, /^250[- ]AUTH PLAIN LOGIN$/m, 'offered inside TLS');
  const raw = await rawSmtp(rig.port);
  t.teardown(() => raw.close());
  await raw.command('EHLO client.example');
  t.match(await raw.command('AUTH PLAIN AHJlc2VuZAB4'), /^530 5\.7\.0 Must issue a STARTTLS command first/, 'AUTH in the clear is refused');
  t.match(await raw.command('MAIL FROM:<hello@sender.net>'), /^530 5\.7\.0 Authentication required/, 'nothing is taken without a login');
});

t.test('a wrong key or user name is 535 5.7.8, logged without the password', async (t) => {
  const wrongKey = `re_${'x'.repeat(40)}`;
  const bad = await refusal(rig.transport(wrongKey, { localAddress: '127.0.0.2' }).verify());
  t.equal(bad.code, 535);
  t.match(bad.response, /^535 5\.7\.8 Authentication credentials invalid/);
  const user = await refusal(rig.transport(team.token, { user: 'someone', localAddress: '127.0.0.2' }).verify());
  t.equal(user.code, 535, 'the user name is fixed');
  const refusals = lines.filter((l) => l.includes('submission login refused'));
  t.equal(refusals.length, 2, 'one line per refusal');
  t.notOk(refusals.some((l) => l.includes(wrongKey) || l.includes(team.token) || l.includes('someone')), 'neither password nor user name is logged');
  t.ok(await rig.transport(team.token, { user: 'RESEND' }).verify(), 'the user name in any case, with the right key');
});

t.test('failed logins are rate-limited per client address, the right key included', async (t) => {
  const from = { localAddress: '127.0.0.3' };
  for (let i = 0; i < 3; i++) t.equal((await refusal(rig.transport('re_nothing_like_a_key', from).verify())).code, 535);
  const limited = await refusal(rig.transport(team.token, from).verify());
  t.equal(limited.code, 454);
  t.match(limited.response, /^454 4\.7\.0 Too many failed logins/);
  t.ok(await rig.transport(team.token, { localAddress: '127.0.0.4' }).verify(), 'another address logs in');
});

t.test('a sending_access key pinned to a domain sends only from it', async (t) => {
  const keys = app.appliance.services.api.foundation.apiKeys;
  const key = await keys.create(team.teamId, { name: 'pinned', permission: 'sending_access', domain_id: other.id }, { kind: 'operator' });
  const transport = rig.transport(key.token);
  const early = await refusal(transport.sendMail({ from: 'hello@sender.net', to: 'ann@inbox-one.net', subject: 's', text: 't' }));
  t.equal(early.code, 550);
  t.match(early.response, /^550 5\.7\.1 This API key may only send from its own domain, not from sender\.net/, 'refused at MAIL FROM');
  const late = await refusal(transport.sendMail({
    envelope: { from: 'bounce@other-sender.net', to: ['ann@inbox-one.net'] }, from: 'hello@sender.net', to: 'ann@inbox-one.net', subject: 's', text: 't',
  }));
  t.match(late.response, /^550 5\.7\.1 This API key may only send from its own domain, not from sender\.net/, 'the From header is checked at the end of the data');
  const ok = await transport.sendMail({ from: 'hello@other-sender.net', to: 'ann@inbox-one.net', subject: 'pinned', text: 't' });
  t.match(ok.response, /^250 2\.0\.0 Ok: queued as /, 'its own domain sends');
  t.ok(sender.id !== other.id);
});

t.test('a key revoked while its session is open sends nothing more on it', async (t) => {
  const keys = app.appliance.services.api.foundation.apiKeys;
  const key = await keys.create(team.teamId, { name: 'short-lived', permission: 'sending_access' }, { kind: 'operator' });
  const pooled = rig.transport(key.token, { pool: true });
  const mail = { from: 'hello@sender.net', to: 'ann@inbox-one.net', subject: 'pooled', text: 't' };
  t.match((await pooled.sendMail(mail)).response, /^250 /);
  await keys.revoke(team.teamId, key.id);
  const refused = await refusal(pooled.sendMail(mail));
  t.equal(refused.code, 550);
  t.match(refused.response, /^550 5\.7\.1 This API key has been revoked/, 'checked again at MAIL FROM');
  const logins = lines.filter((l) => l.includes('"msg":"submission login"') && l.includes(key.id));
  t.equal(logins.length, 1, 'of the same session: one login');
});

t.test('an unverified From domain is 550 5.7.1; a message without a body 550 5.6.0', async (t) => {
  const transport = rig.transport(team.token);
  const unverified = await refusal(transport.sendMail({ from: 'x@nowhere-verified.net', to: 'ann@inbox-one.net', subject: 's', text: 't' }));
  t.match(unverified.response, /^550 5\.7\.1 The nowhere-verified\.net domain is not verified/);
  const attachments = [{ filename: 'a.bin', content: 'x', contentType: 'application/octet-stream' }];
  const bodiless = await refusal(transport.sendMail({ from: 'x@sender.net', to: 'ann@inbox-one.net', subject: 's', attachments }));
  t.match(bodiless.response, /^550 5\.6\.0 Missing html or text field/);
});

t.test("the team's daily cap refuses over SMTP with 450 4.7.0, spent in the accepting transaction", async (t) => {
  const capped = await app.newTeam('Capped');
  await app.appliance.services.api.foundation.teams.setPlan(capped.teamId, 'capped');
  rig.domains.add({ teamId: capped.teamId, name: 'capped.net' });
  const transport = rig.transport(capped.token);
  const to = (n: number) => Array.from({ length: n }, (_, i) => `delivered+${n}-${i}@simulator.svc.invalid`);
  const first = await transport.sendMail({ from: 'hi@capped.net', to: to(2), subject: 'one', text: 't' });
  t.match(first.response, /^250 /);
  const over = await refusal(transport.sendMail({ from: 'hi@capped.net', to: to(2), subject: 'two', text: 't' }));
  t.equal(over.code, 450);
  t.match(over.response, /^450 4\.7\.0 This send would pass the team's daily limit of 3 emails/);
  const fits = await transport.sendMail({ from: 'hi@capped.net', to: to(1), subject: 'three', text: 't' });
  t.match(fits.response, /^250 /, 'what still fits under the cap is taken');
  const db = app.appliance.services.database.db;
  const counter = await db.selectFrom('team_usage').select('emails').where('team_id', '=', capped.teamId).where('period', 'like', 'd:%').executeTakeFirst();
  t.equal(counter?.emails, 3, "the day's counter stands at the cap, the refused send uncounted");
  const stored = await db.selectFrom('emails').select('subject').where('team_id', '=', capped.teamId).execute();
  t.same(stored.map((r) => r.subject).sort(), ['one', 'three'], 'the refused message left nothing behind');
});
