import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { createTestDatabase } from '../helpers/postgres.js';

// Templates with SVC_DATABASE_URL naming a fresh PostgreSQL database: create, versions, publish,
// the live-alias rule (a partial unique index), duplicate, delete and paging.
const pg = await createTestDatabase();
const app = await startTestAppliance({ databaseUrl: pg.url });
t.teardown(async () => { await app.stop(); await pg.drop(); });

t.test('CRUD and publish on PostgreSQL', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  const { token } = await app.newTeam('Pg templates');
  const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token, body });
  const body = { name: 'Pg', alias: 'pg-one', subject: 'Hi {{n}}', html: '<p>{{n}}</p>', variables: [{ key: 'n', type: 'string', fallback_value: 'x' }] };
  const created = await api('POST', '/templates', body);
  t.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id;
  t.match((await api('GET', '/templates/pg-one')).body, { id, status: 'draft', current_version_number: 1, has_unpublished_versions: true });
  t.equal((await api('POST', '/templates', body)).body.name, 'invalid_parameter', 'the alias is taken');
  await api('POST', `/templates/${id}/publish`);
  await api('PATCH', `/templates/${id}`, { subject: 'Hello {{n}}' });
  t.match((await api('GET', `/templates/${id}`)).body, { status: 'published', current_version_number: 2, has_unpublished_versions: true });
  const preview = await api('POST', `/templates/${id}/preview`, { variables: { n: '<Ann>' } });
  t.match(preview.body, { subject: 'Hello <Ann>', html: '<p>&lt;Ann&gt;</p>' });
  const copy = (await api('POST', `/templates/${id}/duplicate`)).body.id;
  t.same((await api('GET', '/templates?limit=5')).body.data.map((x: { id: string }) => x.id), [copy, id]);
  t.same((await api('DELETE', `/templates/${id}`)).body, { object: 'template', id, deleted: true });
  t.equal((await api('POST', '/templates', body)).status, 201, 'the alias is free again');
});

t.test('saved blocks on PostgreSQL: an edit reaches the published version; a deletion keeps the copy', async (t) => {
  const { token, teamId } = await app.newTeam('Pg saved blocks');
  const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token, body });
  const block = (await api('POST', '/saved-blocks', { name: 'Header', kind: 'section', content: { columns: [[{ type: 'text', text: 'Pg header one' }]] } })).body.id;
  const id = (await api('POST', '/templates', { name: 'Pg visual', subject: 'Hi', layout: { sections: [{ saved_block_id: block }] } })).body.id;
  await api('POST', `/templates/${id}/publish`);
  const edited = await api('PATCH', `/saved-blocks/${block}`, { content: { columns: [[{ type: 'text', text: 'Pg header two' }]] } });
  t.equal(edited.status, 200, JSON.stringify(edited.body));
  const render = async () => (await app.appliance.services.api.content.templateSends.forContacts(teamId, id)).render({ contact: null, audience: null }).html;
  t.match(await render(), /Pg header two/);
  t.equal((await api('DELETE', `/saved-blocks/${block}`)).status, 200);
  t.match(await render(), /Pg header two/, 'the copy stays');
  t.same((await api('GET', '/saved-blocks')).body.data, []);
});
