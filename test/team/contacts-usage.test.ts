import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { testClock } from '../helpers/test-clock.js';
import { runAdmin } from '../../bin/admin-commands.js';
import { sampleAllBillableContacts } from '../../core/team/index.js';

// The plan's contacts: its limit refuses one more (falling back to `contacts_limit` when the plan
// sets none), and the billing object's usage counts billable contacts — subscribed, opted in to
// at least one live topic (their own choice, else the topic's default), not suppressed — with the
// month's peak, which holds a rise that has since fallen.
t.setTimeout(120_000);
const plans = [
  { code: 'tiny', name: 'Tiny', limits: { contacts: 2 } },
  { code: 'open', name: 'Open', limits: {} },
];
const clock = testClock(new Date('2026-05-10T08:00:00.000Z'));
const app = await startTestAppliance({ clock, env: { SVC_PLANS: JSON.stringify(plans), SVC_CONTACTS_LIMIT: '3' } });
t.teardown(() => app.stop());
const base = app.baseUrl;

async function teamOn(name: string, plan: string) {
  const team = await app.newTeam(name);
  const lines: string[] = [];
  t.equal(await runAdmin(app.adminSocket, ['team', 'plan', team.teamId, plan], (l) => lines.push(l)), 0, `${name} on ${plan}`);
  const create = (email: string, body: Record<string, unknown> = {}) =>
    call(base, 'POST', '/contacts', { token: team.token, body: { email, ...body } });
  const usage = async () => {
    const shown: string[] = [];
    t.equal(await runAdmin(app.adminSocket, ['team', 'show', team.teamId], (l) => shown.push(l)), 0);
    return JSON.parse(shown.join('\n')).usage;
  };
  return { ...team, create, usage };
}

t.test('the plan\'s contacts limit refuses one more; a plan without one falls back to contacts_limit', async (t) => {
  const tiny = await teamOn('Tiny team', 'tiny');
  t.equal((await tiny.create('a@example.com')).status, 201);
  t.equal((await tiny.create('b@example.com')).status, 201);
  const over = await tiny.create('c@example.com');
  t.equal(over.status, 422);
  t.same(over.body, { statusCode: 422, name: 'validation_error', message: 'Contact limit reached.' });
  t.equal((await tiny.create('A@example.com', { first_name: 'Ann' })).status, 201, 'an update of one held is no new contact');

  const open = await teamOn('Open team', 'open');
  for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) t.equal((await open.create(email)).status, 201);
  t.equal((await open.create('d@example.com')).status, 422, 'contacts_limit (3) where the plan sets none');
});

t.test('usage: billable contacts and the month\'s peak', async (t) => {
  const team = await teamOn('Billing team', 'open');
  t.match(await team.usage(), { contacts_included: null, billable_contacts: 0, peak_billable_contacts: 0, contact_overage_per_1000_cents: null, estimated_contact_overage_cents: 0 });
  const news = await call(base, 'POST', '/topics', { token: team.token, body: { name: 'News', default_subscription: 'opt_out' } });
  t.equal(news.status, 201);
  await team.create('in@example.com', { topics: [{ id: news.body.id, subscription: 'opt_in' }] });
  await team.create('default-out@example.com');
  await team.create('gone@example.com', { unsubscribed: true, topics: [{ id: news.body.id, subscription: 'opt_in' }] });
  t.match(await team.usage(), { billable_contacts: 1, peak_billable_contacts: 1 }, 'only the one opted in to a topic');

  const digest = await call(base, 'POST', '/topics', { token: team.token, body: { name: 'Digest', default_subscription: 'opt_in' } });
  t.equal(digest.status, 201);
  t.equal((await sampleAllBillableContacts(app.appliance.services.database.db, clock.now())).teams > 0, true);
  t.match(await team.usage(), { billable_contacts: 2, peak_billable_contacts: 2 }, 'an opt_in default counts the contact without a choice');

  t.equal((await call(base, 'POST', '/suppressions', { token: team.token, body: { email: 'IN@example.com' } })).status, 201);
  t.equal((await call(base, 'DELETE', `/topics/${digest.body.id}`, { token: team.token })).status, 200);
  t.match(await team.usage(), { billable_contacts: 0, peak_billable_contacts: 2 }, 'suppressed and topic deleted: the peak holds');

  clock.set(new Date('2026-06-01T00:00:00.000Z'));
  t.match(await team.usage(), { billable_contacts: 0, peak_billable_contacts: 0 }, 'a new month, a new peak');
});
