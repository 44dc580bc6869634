import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { testClock } from '../helpers/test-clock.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { fakeSendingDomains, verifyDomainThroughApi } from '../helpers/sending.js';
import { runAdmin } from '../../bin/admin-commands.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { emitEvent } from '../../core/outbox/index.js';
import { releaseDueScheduled } from '../../core/emails/release.js';

// Plans from config, put on teams with the admin CLI, and enforced: domain and webhook endpoint
// limits, the daily cap (00:00 UTC) and the month's included emails, the new-account ramp, the
// sending tiers and the sandbox, and suspension.
const plans = [
  { code: 'small', name: 'Small', limits: { domain_limit: 1, webhook_endpoint_limit: 1, daily_cap: 5, included_emails: 8, retention_days: 30, contacts: 100 } },
  { code: 'ramp', name: 'Ramp', limits: { daily_cap: 100 }, ramp: { first_day: 2, first_week: 3 } },
  { code: 'pro', name: 'Pro', paid: true },
];
const dns = await mailZone();
const clock = testClock(new Date('2026-05-10T08:00:00.000Z'));
const app = await startTestAppliance({
  clock,
  env: {
    SVC_DNS_SERVERS: dns.address, SVC_PLANS: JSON.stringify(plans), SVC_WEBHOOKS_ALLOW_PRIVATE: 'true',
    SVC_REGIONS: JSON.stringify({ 'eu-west-1': { sandbox: true } }),
  },
});
t.teardown(async () => { await app.stop(); await dns.stop(); });
const base = app.baseUrl;
const db = app.appliance.services.database.db;
const domains = fakeSendingDomains(app, dns);
const simulator = (local: string) => `${local}@simulator.svc.invalid`;

async function admin(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runAdmin(app.adminSocket, args, (line) => lines.push(line));
  return { code, lines };
}

/** A team on `plan`, with a (fake) verified sending domain of its own. */
async function teamOn(name: string, plan: string, region: 'us-east-1' | 'eu-west-1' = 'us-east-1') {
  const team = await app.newTeam(name);
  t.equal((await admin('team', 'plan', team.teamId, plan)).code, 0, `${name} put on ${plan}`);
  const domain = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.net`;
  domains.add({ teamId: team.teamId, name: domain, region });
  const send = (to: string[], headers: Record<string, string> = {}) =>
    call(base, 'POST', '/emails', { token: team.token, headers, body: { from: `hi@${domain}`, to, subject: 'Hi', text: 'Hello' } });
  return { ...team, domain, send };
}

const usageOf = async (teamId: string) => {
  const shown = await admin('team', 'show', teamId);
  return JSON.parse(shown.lines.join('\n')).usage;
};

t.test('plans come from config; the operator lists them and puts a team on one', async (t) => {
  const listed = await admin('plan', 'list');
  t.equal(listed.code, 0);
  t.same(listed.lines.map((l) => l.split('  ')[0]), ['default', 'small', 'ramp', 'pro']);
  const { token, teamId } = await app.newTeam('Planned');
  t.same((await call(base, 'GET', '/team', { token })).body.plan.code, 'default', 'a new team is on the default plan');
  const unknown = await admin('team', 'plan', teamId, 'gold');
  t.equal(unknown.code, 1);
  t.match(unknown.lines[0], /validation_error: No plan is configured with the code "gold"/);
  t.equal((await admin('team', 'plan', teamId, 'small')).code, 0);
  t.same((await call(base, 'GET', '/team', { token })).body.plan, {
    code: 'small', name: 'Small', limits: { included_emails: 8, daily_cap: 5, domain_limit: 1, webhook_endpoint_limit: 1, retention_days: 30 },
  });
  const created = await admin('team', 'create', 'Born Pro', '--plan', 'pro');
  t.equal(created.code, 0);
  t.match((await admin('team', 'list')).lines.find((l) => l.endsWith('Born Pro')), /  active  pro  Born Pro$/);
  t.equal((await admin('team', 'plan', teamId, 'default')).code, 0, 'back to default');
  t.equal((await call(base, 'GET', '/team', { token })).body.plan.code, 'default');
});

t.test('domain_limit: one domain more than the plan allows is 422 validation_error (raw and SDK)', async (t) => {
  const { token, teamId } = await app.newTeam('Domain limit');
  await admin('team', 'plan', teamId, 'small');
  const first = await call(base, 'POST', '/domains', { token, body: { name: 'first-limit.net' } });
  t.equal(first.status, 201);
  const second = await call(base, 'POST', '/domains', { token, body: { name: 'second-limit.net' } });
  t.equal(second.status, 422);
  t.equal(second.body.name, 'validation_error');
  t.match(second.body.message, /Small plan allows at most 1 domains/);
  const sdk = await new Resend(token, { baseUrl: base }).domains.create({ name: 'third-limit.net' });
  t.equal(sdk.error?.name, 'validation_error');
  const claim = await call(base, 'POST', '/domains/claim', { token, body: { name: 'first-limit.net' } });
  t.equal(claim.status, 422, 'a claim is not a way around it either');
  t.equal((await call(base, 'DELETE', `/domains/${first.body.id}`, { token })).status, 200);
  t.equal((await call(base, 'POST', '/domains', { token, body: { name: 'second-limit.net' } })).status, 201, 'room again once one is removed');
  const other = await app.newTeam('No domain limit');
  t.equal((await call(base, 'POST', '/domains', { token: other.token, body: { name: 'free-1.net' } })).status, 201);
  t.equal((await call(base, 'POST', '/domains', { token: other.token, body: { name: 'free-2.net' } })).status, 201, 'the default plan has no limit');
});

t.test('webhook_endpoint_limit: one endpoint more than the plan allows is 422 validation_error (raw and SDK)', async (t) => {
  const { token, teamId } = await app.newTeam('Webhook limit');
  await admin('team', 'plan', teamId, 'small');
  const body = { endpoint: 'http://127.0.0.1:9/hook', events: ['email.sent'] };
  const first = await call(base, 'POST', '/webhooks', { token, body });
  t.equal(first.status, 201);
  const second = await call(base, 'POST', '/webhooks', { token, body });
  t.equal(second.status, 422);
  t.equal(second.body.name, 'validation_error');
  t.match(second.body.message, /at most 1 webhook endpoints/);
  const sdk = await new Resend(token, { baseUrl: base }).webhooks.create({ endpoint: 'http://127.0.0.1:9/other', events: ['email.sent'] });
  t.equal(sdk.error?.name, 'validation_error');
  t.equal((await call(base, 'DELETE', `/webhooks/${first.body.id}`, { token })).status, 200);
  t.equal((await call(base, 'POST', '/webhooks', { token, body })).status, 201);
});

t.test('the daily cap counts every deliverable recipient of every send path and resets at 00:00 UTC; the month caps at included_emails', async (t) => {
  clock.set(new Date('2026-05-10T08:00:00.000Z'));
  const team = await teamOn('Capped', 'small');
  t.equal((await team.send([simulator('delivered'), simulator('delivered+2')])).status, 200, '2 of 5');
  const batch = await call(base, 'POST', '/emails/batch', { token: team.token, body: [1, 2].map((i) => ({ from: `hi@${team.domain}`, to: simulator(`b${i}`), subject: 'B', text: 'b' })) });
  t.equal(batch.status, 200, 'a batch counts too: 4 of 5');
  t.equal((await team.send([simulator('suppressed'), simulator('delivered+3')])).status, 200, 'a suppressed recipient is uncharged: 5 of 5');
  const over = await team.send([simulator('delivered+4')]);
  t.equal(over.status, 429);
  t.equal(over.body.name, 'daily_quota_exceeded');
  t.equal(over.headers.get('retry-after'), String(16 * 3600), 'until 00:00 UTC');
  const sdk = await new Resend(team.token, { baseUrl: base }).emails.send({ from: `hi@${team.domain}`, to: simulator('x'), subject: 'S', text: 's' });
  t.equal(sdk.error?.name, 'daily_quota_exceeded');
  const keyed = await team.send([simulator('k')], { 'idempotency-key': 'cap-key' });
  t.equal(keyed.status, 429, 'over the cap even with an idempotency key');
  const rows = await db.selectFrom('emails').select('id').where('team_id', '=', team.teamId).execute();
  t.equal(rows.length, 4, 'refused sends left no email behind (one send, a batch of two, one send)');
  t.match(await usageOf(team.teamId), { emails: 5, emails_today: 5, daily_limit: 5, daily_limit_reason: null, monthly_limit: 8, included_emails: 8, day_start: '2026-05-10T00:00:00.000Z', period_start: '2026-05-01T00:00:00.000Z', period_end: '2026-06-01T00:00:00.000Z' });

  clock.set(new Date('2026-05-11T00:00:01.000Z'));
  const keyedOk = await team.send([simulator('k1'), simulator('k2')], { 'idempotency-key': 'next-day' });
  t.equal(keyedOk.status, 200, 'a new UTC day, a new allowance');
  t.equal((await team.send([simulator('k1'), simulator('k2')], { 'idempotency-key': 'next-day' })).body.id, keyedOk.body.id, 'a replay is not counted again');
  const month = await team.send([simulator('m1'), simulator('m2')]);
  t.equal(month.status, 429, '9 would pass the 8 a month');
  t.equal(month.body.name, 'monthly_quota_exceeded');
  t.equal(month.headers.get('retry-after'), String(21 * 86400 - 1));
  t.equal((await team.send([simulator('m1')])).status, 200, 'exactly 8 fits');
  t.match(await usageOf(team.teamId), { emails: 8, emails_today: 3 });
  clock.set(new Date('2026-06-01T00:00:00.000Z'));
  t.equal((await team.send([simulator('june')])).status, 200, 'a new month');
  t.match(await usageOf(team.teamId), { emails: 1, emails_today: 1, period_start: '2026-06-01T00:00:00.000Z' });
});

t.test('the new-account ramp: first day, then the first week doubling each clean day, then the plan', async (t) => {
  const start = new Date('2026-07-01T08:00:00.000Z');
  clock.set(start);
  const team = await teamOn('Ramped', 'ramp');
  const at = (days: number, hours = 1) => clock.set(new Date(start.getTime() + days * 86_400_000 + hours * 3_600_000));
  at(0);
  t.match(await usageOf(team.teamId), { daily_limit: 2, daily_limit_reason: 'new_account' });
  t.equal((await team.send([simulator('a'), simulator('b')])).status, 200);
  const first = await team.send([simulator('c')]);
  t.equal(first.status, 429);
  t.match(first.body.message, /first day/);
  at(1);
  t.match(await usageOf(team.teamId), { daily_limit: 3, daily_limit_reason: 'new_account_ramp' });
  t.equal((await team.send([simulator('a'), simulator('b'), simulator('c')])).status, 200);
  t.equal((await team.send([simulator('d')])).status, 429);
  at(2);
  t.match(await usageOf(team.teamId), { daily_limit: 6, daily_limit_reason: 'new_account_ramp' }, 'day 1 was clean: doubled');
  await emitEvent(eventsRepo(db), team.teamId, 'email.complained', { email_id: 'x' }, new Date(start.getTime() + 2 * 86_400_000 + 2 * 3_600_000));
  at(3);
  t.match(await usageOf(team.teamId), { daily_limit: 6 }, 'day 2 had a complaint: no doubling for it');
  at(4);
  t.match(await usageOf(team.teamId), { daily_limit: 12 }, 'day 3 was clean again');
  at(7);
  t.match(await usageOf(team.teamId), { daily_limit: 100, daily_limit_reason: null }, 'after the first week: the plan\'s daily cap');
});

t.test('a suspended team cannot send by any path; reinstated it can', async (t) => {
  clock.set(new Date('2026-08-01T08:00:00.000Z'));
  const team = await teamOn('Suspended', 'default');
  t.equal((await team.send([simulator('before')])).status, 200);
  const scheduled = await call(base, 'POST', '/emails', {
    token: team.token, body: { from: `hi@${team.domain}`, to: simulator('scheduled'), subject: 'Later', text: 'l', scheduled_at: '2026-08-01T09:00:00.000Z' },
  });
  t.equal(scheduled.status, 200, 'scheduled before the suspension');
  const suspended = await admin('team', 'suspend', team.teamId);
  t.equal(suspended.code, 0);
  t.match(suspended.lines[0], /suspended/);
  const send = await team.send([simulator('during')]);
  t.equal(send.status, 403);
  t.equal(send.body.name, 'suspended_api_key');
  const get = await call(base, 'GET', '/team', { token: team.token });
  t.equal(get.status, 403);
  t.equal(get.body.name, 'suspended_api_key');
  t.match(JSON.parse((await admin('team', 'show', team.teamId)).lines.join('\n')), { status: 'suspended', risk_state: 'suspended' });
  // A path with no API key in front (campaigns, automations) meets the allowance itself.
  const caller = { teamId: team.teamId, apiKeyId: null, domainId: null };
  const direct = await app.appliance.services.api.sending.emails.send(caller, { from: `hi@${team.domain}`, to: simulator('direct'), subject: 'D', text: 'd' })
    .then(() => undefined, (err: unknown) => err as { statusCode?: number; errorName?: string });
  t.match(direct, { statusCode: 403, errorName: 'suspended_api_key' }, 'refused without an API key in front too');
  clock.set(new Date('2026-08-01T09:00:01.000Z'));
  const services = app.appliance.services;
  t.equal(await releaseDueScheduled({ db, clock, logger: services.logger, wake: () => undefined }), 1, 'mail accepted before the suspension is still released');
  const row = await db.selectFrom('emails').select('status').where('id', '=', scheduled.body.id).executeTakeFirstOrThrow();
  t.not(row.status, 'scheduled');
  t.equal((await admin('team', 'reinstate', team.teamId)).code, 0);
  t.equal((await team.send([simulator('after')])).status, 200);
  t.equal((await call(base, 'GET', '/team', { token: team.token })).body.risk_state, 'normal');
});

t.test('sending tiers: new, verified, paid, trusted; a trusted team leaves the sandbox', async (t) => {
  clock.set(new Date());
  const team = await teamOn('Tiers', 'default', 'eu-west-1');
  const sending = async () => (await call(base, 'GET', '/team', { token: team.token })).body.sending;
  t.same(await sending(), { sandbox_regions: ['eu-west-1'], tier: 0, tier_name: 'new', next_unlock: 'verify_domain' });
  const sandboxed = await team.send(['ann@inbox-one.net']);
  t.equal(sandboxed.status, 403, 'the sandbox region refuses an outside recipient');
  t.equal(sandboxed.body.name, 'validation_error');
  await verifyDomainThroughApi(base, team.token, dns, 'tiers-verified.net');
  t.same(await sending(), { sandbox_regions: ['eu-west-1'], tier: 1, tier_name: 'verified', next_unlock: 'operator_review' });
  await admin('team', 'plan', team.teamId, 'pro');
  t.same(await sending(), { sandbox_regions: ['eu-west-1'], tier: 2, tier_name: 'paid', next_unlock: 'operator_review' });
  t.equal((await admin('team', 'trust', team.teamId)).code, 0);
  t.same(await sending(), { sandbox_regions: [], tier: 3, tier_name: 'trusted', next_unlock: null });
  t.equal((await team.send(['ann@inbox-one.net'])).status, 200, 'out of the sandbox');
  t.equal((await admin('team', 'untrust', team.teamId)).code, 0);
  t.equal((await team.send(['ann@inbox-one.net'])).status, 403, 'back in it');
});
