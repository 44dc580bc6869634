import t from 'tap';
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// A delivery gives its place and its destination slot back when its SMTP transaction ends, before
// its outcome is written: the outcome waits for the next delivery's submitting mark to share its
// transaction (storage/sql/group-commit.ts), so the next delivery has to be able to start. With
// one place, the test holds SQLite's write lock from the first message's data phase on: its
// outcome cannot be written, and the second transaction must still reach the MX.
t.setTimeout(120_000);

const dns = await mailZone(['inbox-one.net']);
t.teardown(() => dns.stop());
// The reply to the data comes late enough for the lock to be taken before it.
const mx = await startFakeMx({ dns: dns.address, replyDelayMs: 1_000 });
t.teardown(() => mx.stop());
const app = await startTestAppliance({
  roles: ['api', 'outbound'],
  env: {
    SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port),
    SVC_REGIONS: JSON.stringify({ 'us-east-1': { concurrency: 1, per_domain_connections: 1 } }),
  },
});
t.teardown(() => app.stop());

t.test('the next transaction starts while the last one\'s outcome is still unwritten', async (t) => {
  const team = await app.newTeam('Places');
  fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
  const body = ['first', 'second'].map((name) => ({ from: 'hello@sender.net', to: `${name}@inbox-one.net`, subject: name, text: 'Hello' }));
  const sent = await call(app.baseUrl, 'POST', '/emails/batch', { token: team.token, body });
  t.equal(sent.status, 200, 'both emails accepted');
  const [first, second] = (sent.body.data as { id: string }[]).map((d) => d.id);
  const lock = new BetterSqlite3(join(app.config.data_dir, 'svc.sqlite'));
  const stateOf = (emailId: string) => lock.prepare('select state from email_recipients where email_id = ?').pluck().get(emailId);
  // The submitting mark is committed before any data goes: the lock is taken after it (taken at
  // the MX's 354 instead, it would hold up the mark itself), and before the MX's late reply.
  await waitFor('the first message submitting', async () => stateOf(first!) === 'submitting' || undefined);
  lock.prepare('begin immediate').run();
  try {
    await waitFor('the second transaction at the MX', async () => mx.rcpts >= 2 || undefined, 4_000);
    t.equal(stateOf(first!), 'submitting', 'the first outcome is not written yet');
    t.equal(stateOf(second!), 'queued', 'nor the second mark: no data went out for it');
  } finally {
    lock.prepare('rollback').run();
  }
  try {
    await waitFor('both delivered', async () => (stateOf(first!) === 'delivered' && stateOf(second!) === 'delivered') || undefined);
    t.equal(mx.received.length, 2, 'each message taken once');
  } finally {
    lock.close();
  }
});
