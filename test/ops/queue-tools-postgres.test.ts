import t from 'tap';
import { runAdmin } from '../../bin/admin-commands.js';
import type { OutboundRole } from '../../bin/roles/outbound.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { eventsOf, mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call, lastEventOf } from '../helpers/http.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// The queue tools' SQL on PostgreSQL (SVC_DATABASE_URL): grouped counts, filters, the attempts
// kept with their replies, hold / release / flush and delete, against a deferring MX.
t.setTimeout(120_000);
const pg = await createTestDatabase();
const dns = await mailZone(['inbox-one.net']);
const mx = await startFakeMx({ dns: dns.address });
const clock = testClock();
const app = await startTestAppliance({
  databaseUrl: pg.url, clock, roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port) },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); await pg.drop(); });
const outbound = app.appliance.running.find((r) => r.name === 'outbound') as OutboundRole;
const team = await app.newTeam('Pg Queue');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });

const send = async (to: string) => {
  const r = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: { from: 'hello@sender.net', to, subject: 'Pg', text: 'Hi' } });
  if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
  return r.body.id as string;
};
const lastEvent = (id: string) => lastEventOf(app.baseUrl, team.token, id);
const until = (id: string, event: string) => waitFor(`${id} to reach ${event}`, async () => (await lastEvent(id)) === event);
async function adminJson(...args: string[]) {
  const lines: string[] = [];
  const code = await runAdmin(app.adminSocket, [...args, '--json'], (line) => lines.push(line));
  if (code !== 0) throw new Error(`svc admin ${args.join(' ')}: ${lines.join('\n')}`);
  return JSON.parse(lines.join('\n'));
}

t.test('the queue tools on PostgreSQL', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  mx.setDefault({ kind: 'data', reply: '451 4.3.0 try later' });
  const [a, b] = [await send('a@inbox-one.net'), await send('b@inbox-one.net')];
  await Promise.all([until(a, 'delivery_delayed'), until(b, 'delivery_delayed')]);
  t.match(await adminJson('queue', 'summary'), { totals: { deferred: 2, total: 2 }, destinations: [{ domain: 'inbox-one.net', counts: { deferred: 2 } }] });
  t.same((await adminJson('queue', 'list', '--state', 'deferred', '--team', 'Pg Queue')).data.map((e: { email_id: string }) => e.email_id), [a, b]);
  t.match((await adminJson('queue', 'show', a)).recipients[0].history, [{ attempt: 1, outcome: 'deferred', reply: '451 4.3.0 try later', relay: /127\.0\.0\.1/ }]);

  mx.setDefault({ kind: 'accept' });
  t.match(await adminJson('queue', 'hold', '--domain', 'inbox-one.net'), { recipients: 2 });
  t.match(await adminJson('queue', 'release', b), { recipients: 1 });
  t.match(await adminJson('queue', 'flush', '--region', 'us-east-1'), { recipients: 1, regions: ['us-east-1'] });
  await until(b, 'delivered');
  outbound.poke();
  t.match(await adminJson('queue', 'list'), { data: [{ email_id: a, state: 'held' }] }, 'the held one stays');
  t.match(await adminJson('queue', 'delete', a, '--reason', 'test'), { failed: ['a@inbox-one.net'] });
  t.equal(await lastEvent(a), 'failed');
  t.match((await eventsOf(app, a)).filter((e) => e.type === 'email.failed'), [{ data: { failed: { reason: 'deleted_by_operator: test' } } }]);
  t.match(await adminJson('queue', 'summary'), { totals: { total: 0 } });
});
