import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { addContact, campaignTeam, drainWork, parseMessage } from '../helpers/broadcasts.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';
import { createTestDatabase } from '../helpers/postgres.js';

// The basic broadcast flow with SVC_DATABASE_URL naming a fresh PostgreSQL database: draft, gate,
// send, the fan-out in small pages, exclusions, the message at a fake MX, cancel.
const pg = await createTestDatabase();
const dns = await mailZone();
const mx = await startFakeMx({ dns: dns.address });
const app = await startTestAppliance({
  databaseUrl: pg.url, roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_BROADCASTS_PAGE_SIZE: '2' },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); await pg.drop(); });

t.test('draft → gate → queued → sent on PostgreSQL, with exclusions and the message at the MX', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  const team = await campaignTeam(app, dns, 'Pg news', 'pg-news.net');
  const token = team.token;
  for (const name of ['ann', 'bob', 'cy', 'dee', 'eli']) await addContact(app, token, { email: `${name}@inbox-one.net`, first_name: name.toUpperCase() });
  await addContact(app, token, { email: 'gone@inbox-one.net', unsubscribed: true });
  const draft = await call(app.baseUrl, 'POST', '/broadcasts', { token, body: { name: 'Pg', segment_id: team.segmentId, from: 'n@pg-news.net' } });
  t.equal(draft.status, 201);
  const id = draft.body.id as string;
  t.equal((await call(app.baseUrl, 'POST', `/broadcasts/${id}/send`, { token, body: {} })).body.details.check, 'body');
  t.equal((await call(app.baseUrl, 'PATCH', `/broadcasts/${id}`, { token, body: { subject: 'Hi {{{FIRST_NAME}}}', preview_text: 'p', html: '<p>Hi {{{FIRST_NAME}}}</p>' } })).status, 200);
  t.equal((await call(app.baseUrl, 'POST', `/broadcasts/${id}/send`, { token, body: {} })).status, 200);
  await drainWork(app);
  const b = (await call(app.baseUrl, 'GET', `/broadcasts/${id}`, { token })).body;
  t.equal(b.status, 'sent');
  const sent = (await call(app.baseUrl, 'GET', `/broadcasts/${id}/recipients?type=sent&limit=100`, { token })).body.data as { email: string }[];
  t.same(sent.map((r) => r.email).sort(), ['ann', 'bob', 'cy', 'dee', 'eli'].map((n) => `${n}@inbox-one.net`), 'every member once, across three pages');
  const excluded = (await call(app.baseUrl, 'GET', `/broadcasts/${id}/recipients?type=suppressed`, { token })).body.data;
  t.match(excluded, [{ email: 'gone@inbox-one.net', reason: 'unsubscribed' }]);
  const message = await waitFor('cy\'s message', async () => mx.received.find((m) => m.rcptTo === 'cy@inbox-one.net'));
  const mail = await parseMessage(message.raw);
  t.equal(mail.subject, 'Hi CY');
  t.match(mail.html, /1 Main St/, 'the footer');
  t.ok(mail.headerLines.some((h) => h.key === 'list-unsubscribe-post'), 'List-Unsubscribe-Post');

  const later = await call(app.baseUrl, 'POST', '/broadcasts', {
    token, body: { name: 'Later', segment_id: team.segmentId, from: 'n@pg-news.net', subject: 's', preview_text: 'p', text: 't', send: true, scheduled_at: 'in 1 hour' },
  });
  t.equal(later.status, 201, JSON.stringify(later.body));
  t.equal((await call(app.baseUrl, 'POST', `/broadcasts/${later.body.id}/cancel`, { token })).status, 200);
  await drainWork(app);
  t.equal((await call(app.baseUrl, 'GET', `/broadcasts/${later.body.id}`, { token })).body.status, 'canceled');
});
