import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentRecords, teamEvents } from '../helpers/audience.js';
import { runImport } from '../helpers/contact-imports.js';
import { call } from '../helpers/http.js';
import { createTestDatabase } from '../helpers/postgres.js';

// Contact imports with SVC_DATABASE_URL naming a fresh PostgreSQL database: the happy path with
// its counts, an upsert over what the first import wrote, failures and the reads.
const pg = await createTestDatabase();
const app = await startTestAppliance({ databaseUrl: pg.url, roles: ['api', 'jobs'], env: { SVC_WORK_POLL_MS: '50' } });
t.teardown(async () => { await app.stop(); await pg.drop(); });
const base = app.baseUrl;

t.test('imports on PostgreSQL: created, updated, failed, typed properties, consent, no webhooks', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  const { token, teamId } = await app.newTeam('Pg imports');
  const map = { email: 'email', first_name: 'name', properties: { seats: { column: 'seats', type: 'number' }, vip: { column: 'vip', type: 'boolean' } } };
  const first = await runImport(base, token, '\ufeffemail,name,seats,vip\r\nann@example.com,Ann,3,true\r\nbo@example.com,"Bo\r\nRay",x,false\r\ncy@example.com,Cy,2.5,\r\n', { column_map: map });
  t.match(first, { status: 'completed', counts: { total: 3, created: 2, failed: 1, updated: 0, skipped: 0 } });
  t.same((await call(base, 'GET', `/contacts/imports/${first.id}/failures`, { token })).body.data, [
    { row_number: 2, email: 'bo@example.com', reason: 'Property `seats` is a number; the value does not match.' },
  ]);
  const second = await runImport(base, token, 'email,name,seats,vip\nANN@example.com,Annie,4,\ndee@example.com,Dee,1,true\n', { column_map: map, on_conflict: 'upsert' });
  t.match(second.counts, { total: 2, created: 1, updated: 1 });
  t.match((await call(base, 'GET', '/contacts/ann@example.com', { token })).body, {
    email: 'ann@example.com', first_name: 'Annie', properties: { seats: { type: 'number', value: 4 }, vip: { type: 'boolean', value: true } },
  });
  t.match((await call(base, 'GET', '/contacts/cy@example.com', { token })).body.properties, { seats: { value: 2.5 } });
  t.equal((await consentRecords(app, teamId)).filter((c) => c.source === 'import').length, 3);
  t.same(await teamEvents(app, teamId, 'contact.'), []);
  const list = (await call(base, 'GET', '/contacts/imports?status=completed', { token })).body;
  t.same(list.data.map((i: { id: string }) => i.id), [second.id, first.id]);
});
