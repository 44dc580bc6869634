import t from 'tap';
import { consentCutoff, pruneConsentRecords } from '../../core/retention/index.js';
import { pruneConsentRecordsJob } from '../../jobs/retention.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentHashOf, consentRecords } from '../helpers/audience.js';
import { call } from '../helpers/http.js';
import { testClock } from '../helpers/test-clock.js';

// Consent records are kept three years (spec Contact, rule 2), erased contacts' ones included,
// then the retention job deletes them; younger ones stay.
const DAY = 86_400_000;
const clock = testClock(new Date('2026-02-10T08:00:00.000Z'));
const app = await startTestAppliance({ clock });
t.teardown(() => app.stop());
const base = app.baseUrl;
const db = app.appliance.services.database.db;

t.test('three calendar years, counted from each record', async (t) => {
  t.equal(consentCutoff(new Date('2029-02-10T08:00:00.000Z')), '2026-02-10T08:00:00.000Z');
  t.equal(consentCutoff(new Date('2028-02-29T12:00:00.000Z')), '2025-03-01T12:00:00.000Z', 'a leap day counts back to the day after');
});

t.test('records past three years go, after erasure too; younger ones stay', async (t) => {
  const { token, teamId } = await app.newTeam('Consent retention');
  const old = await call(base, 'POST', '/contacts', { token, body: { email: 'old@example.com' } });
  await call(base, 'PATCH', `/contacts/${old.body.id}`, { token, body: { unsubscribed: true } });
  await call(base, 'POST', '/contacts', { token, body: { email: 'erased@example.com' } });
  await call(base, 'DELETE', '/contacts/erased@example.com', { token });
  t.equal((await consentRecords(app, teamId)).length, 4);

  clock.advance(365 * DAY);
  await call(base, 'PATCH', `/contacts/${old.body.id}`, { token, body: { unsubscribed: false } });
  clock.set(new Date('2029-02-10T07:59:59.000Z'));
  t.match(await pruneConsentRecords(db, clock), { deleted: 0 }, 'a second short of three years, everything stays');

  clock.set(new Date('2029-02-10T08:00:01.000Z'));
  const job = pruneConsentRecordsJob({ db, clock });
  t.equal(job.name, 'prune-consent-records');
  t.same(await job.run(), { deleted: 4 });
  const left = await consentRecords(app, teamId);
  t.same(left.map((r) => [r.contact_id, r.value, r.created_at]), [[old.body.id, 'subscribed', '2027-02-10T08:00:00.000Z']], 'the younger record stays');
  t.notOk(left.some((r) => r.email_hash === consentHashOf(app, 'erased@example.com')), 'the erased address\'s trail went at three years too');
  t.match(await pruneConsentRecords(db, clock), { deleted: 0 }, 'a second run finds nothing');
});
