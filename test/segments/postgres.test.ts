import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { platformEvents } from '../helpers/audience.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { apiOf, memberEmails, membershipScenario } from '../helpers/segments.js';

// Segments with SVC_DATABASE_URL naming a fresh PostgreSQL database: the same membership
// scenario as on SQLite (the compiled filters are the same SQL text on both engines), explicit
// members, svc:segment.entered and the live-name rule.
const pg = await createTestDatabase();
const app = await startTestAppliance({ databaseUrl: pg.url });
t.teardown(async () => { await app.stop(); await pg.drop(); });

t.test('membership on PostgreSQL: all, any, not, properties, topics, by hand', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  await membershipScenario(t, app, 'Pg membership');
});

t.test('names, additions on create and erasure on PostgreSQL', async (t) => {
  const { token, teamId } = await app.newTeam('Pg segments');
  const api = apiOf(app, token);
  const seg = await api('POST', '/segments', { name: 'Pg hand' });
  t.equal(seg.status, 201);
  const dup = await api('POST', '/segments', { name: 'PG HAND' });
  t.equal(dup.status, 422);
  t.equal(dup.body.name, 'invalid_parameter');
  const c = await api('POST', '/contacts', { email: 'pg@example.com', segments: [{ id: seg.body.id }] });
  t.equal(c.status, 201, JSON.stringify(c.body));
  t.same(await memberEmails(api, seg.body.id), ['pg@example.com']);
  t.same((await platformEvents(app, teamId)).filter((e) => e.type === 'svc:segment.entered').map((e) => e.data), [{ contact_id: c.body.id, segment_id: seg.body.id }]);
  t.equal((await api('DELETE', `/segments/${seg.body.id}`)).status, 200);
  t.equal((await api('POST', '/segments', { name: 'pg hand' })).status, 201, 'the name is free once deleted');
  t.equal((await api('DELETE', `/contacts/${c.body.id}`)).status, 200);
  t.equal((await app.appliance.services.database.db.selectFrom('segment_members').selectAll().where('team_id', '=', teamId).execute()).length, 0);
});
