import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentRecords, platformEvents } from '../helpers/audience.js';
import { call } from '../helpers/http.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { audienceFixture, checkboxes, linksOf, page, pathOf } from '../helpers/preferences.js';

// The preference links with SVC_DATABASE_URL naming a fresh PostgreSQL database: the page's
// reads, its topic form and the one-click unsubscribe write the same rows as on SQLite.
const pg = await createTestDatabase();
const app = await startTestAppliance({ databaseUrl: pg.url });
t.teardown(async () => { await app.stop(); await pg.drop(); });
const base = app.baseUrl;

t.test('page, topic form and one-click unsubscribe on PostgreSQL', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  const f = await audienceFixture(app, 'Pg preferences');
  const links = linksOf(app, f.teamId, f.contactId, f.email);
  const shown = await page(base, 'GET', pathOf(links.preferencesUrl));
  t.equal(shown.status, 200);
  t.same(checkboxes(shown.text), { [f.topics.news]: true, [f.topics.offers]: false, [f.topics.insiders]: true, [f.topics.club]: true });
  const saved = await page(base, 'POST', pathOf(links.preferencesUrl), new URLSearchParams([
    ['action', 'save'], ['shown', f.topics.news], ['shown', f.topics.offers], ['topic', f.topics.offers],
  ]), 'Pg-Browser/1');
  t.equal(saved.status, 200);
  t.same(checkboxes(saved.text)[f.topics.offers], true);
  t.same(checkboxes(saved.text)[f.topics.news], false);
  const one = await page(base, 'POST', pathOf(links.unsubscribeUrl), new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }), 'Pg-Provider/1');
  t.equal(one.status, 200);
  t.equal((await call(base, 'GET', `/contacts/${f.contactId}`, { token: f.token })).body.unsubscribed, true);
  const trail = (await consentRecords(app, f.teamId)).filter((r) => r.source !== 'api').map((r) => [r.kind, r.value, r.source, r.user_agent]);
  t.same(trail.sort(), [
    ['subscription', 'unsubscribed', 'one_click', 'Pg-Provider/1'], ['topic', 'opt_in', 'preference_page', 'Pg-Browser/1'], ['topic', 'opt_out', 'preference_page', 'Pg-Browser/1'],
  ].sort());
  t.same((await platformEvents(app, f.teamId)).filter((e) => e.type.startsWith('svc:topic.')).length, 3, 'Club at creation, then News and Offers');
  t.equal((await call(base, 'DELETE', `/contacts/${f.contactId}`, { token: f.token })).status, 200);
  t.equal((await page(base, 'GET', pathOf(links.preferencesUrl))).status, 404);
});
