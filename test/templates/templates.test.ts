import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';

// Templates over raw HTTP: versions and their states, aliases, variables, permissions and every
// refusal of the spec's tables.
const app = await startTestAppliance();
t.teardown(() => app.stop());
const base = app.baseUrl;
const team = await app.newTeam('Templates');
const api = (method: string, path: string, body?: unknown, token = team.token) => call(base, method, path, { token, body });
const welcome = {
  name: 'Welcome', subject: 'Hi {{ first_name }}', html: '<p>Hello {{first_name}}, you have {{count}} items</p>',
  variables: [{ key: 'first_name', type: 'string', fallback_value: 'there' }, { key: 'count', type: 'number' }],
};

t.test('create writes version 1 as a draft; publish; update opens the next draft', async (t) => {
  const created = await api('POST', '/templates', { ...welcome, alias: 'welcome-1' });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.same(Object.keys(created.body).sort(), ['id', 'object']);
  const id = created.body.id;
  const got = await api('GET', `/templates/${id}`);
  t.match(got.body, {
    object: 'template', id, name: 'Welcome', alias: 'welcome-1', status: 'draft', published_at: null, has_unpublished_versions: true,
    current_version_number: 1, subject: 'Hi {{ first_name }}', html: welcome.html, text: null, layout: null,
  });
  t.same(got.body.variables.map((v: { key: string; type: string; fallback_value: unknown }) => [v.key, v.type, v.fallback_value]), [['first_name', 'string', 'there'], ['count', 'number', null]]);
  const v1 = got.body.current_version_id;
  const byAlias = await api('GET', '/templates/welcome-1');
  t.equal(byAlias.body.id, id, 'the alias reads the same template');

  t.same((await api('POST', `/templates/${id}/publish`)).body, { object: 'template', id });
  const published = (await api('GET', `/templates/${id}`)).body;
  t.match(published, { status: 'published', has_unpublished_versions: false, current_version_id: v1 });
  t.match(published.published_at, /^\d{4}-/);

  t.same((await api('PATCH', `/templates/${id}`, { subject: 'Hello {{first_name}}' })).body, { object: 'template', id });
  const draft = (await api('GET', `/templates/${id}`)).body;
  t.match(draft, { status: 'published', has_unpublished_versions: true, current_version_number: 2, subject: 'Hello {{first_name}}' });
  t.not(draft.current_version_id, v1);
  // A second edit changes the open draft, not a third version.
  await api('PATCH', `/templates/${id}`, { text: 'Hello {{first_name}} ({{count}})' });
  t.match((await api('GET', `/templates/${id}`)).body, { current_version_number: 2, current_version_id: draft.current_version_id, text: 'Hello {{first_name}} ({{count}})' });
  // Renaming alone opens no version.
  await api('PATCH', `/templates/${id}`, { name: 'Welcome mail', id });
  t.match((await api('GET', `/templates/${id}`)).body, { name: 'Welcome mail', current_version_number: 2 });
  await api('POST', `/templates/welcome-1/publish`);
  t.match((await api('GET', `/templates/${id}`)).body, { has_unpublished_versions: false, current_version_id: draft.current_version_id });
});

t.test('list pages newest first with limit, after and before', async (t) => {
  const { token } = await app.newTeam('Listing');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await api('POST', '/templates', { name: `T${i}`, html: '<p>x</p>' }, token)).body.id);
  const first = await api('GET', '/templates?limit=2', undefined, token);
  t.match(first.body, { object: 'list', has_more: true });
  t.same(first.body.data.map((x: { id: string }) => x.id), [ids[2], ids[1]]);
  t.same(Object.keys(first.body.data[0]).sort(), ['alias', 'created_at', 'id', 'name', 'published_at', 'status', 'updated_at']);
  const next = await api('GET', `/templates?limit=2&after=${ids[1]}`, undefined, token);
  t.same(next.body.data.map((x: { id: string }) => x.id), [ids[0]]);
  t.equal(next.body.has_more, false);
  const before = await api('GET', `/templates?limit=1&before=${ids[0]}`, undefined, token);
  t.same(before.body.data.map((x: { id: string }) => x.id), [ids[1]]);
});

t.test('duplicate copies the current version as a new draft without the alias; delete frees the alias', async (t) => {
  const id = (await api('POST', '/templates', { ...welcome, alias: 'dup-me' })).body.id;
  const copy = await api('POST', `/templates/dup-me/duplicate`);
  t.equal(copy.status, 200);
  t.match((await api('GET', `/templates/${copy.body.id}`)).body, { name: 'Welcome (copy)', alias: null, status: 'draft', html: welcome.html });
  t.equal((await api('POST', '/templates', { ...welcome, alias: 'dup-me' })).status, 422, 'a live alias is taken');
  t.same((await api('DELETE', `/templates/${id}`)).body, { object: 'template', id, deleted: true });
  t.equal((await api('GET', `/templates/${id}`)).status, 404);
  t.equal((await api('GET', '/templates/dup-me')).status, 404);
  t.equal((await api('POST', '/templates', { ...welcome, alias: 'dup-me' })).status, 201, 'the alias is free again');
});

t.test('alias rules', async (t) => {
  for (const alias of ['Upper', '-lead', 'has space', 'a'.repeat(64), '0190a0b1-1234-7abc-8def-0123456789ab', 'dot.ted']) {
    const r = await api('POST', '/templates', { ...welcome, alias });
    t.equal(r.status, 422, alias);
    t.equal(r.body.name, 'validation_error', alias);
  }
  for (const alias of ['a', '9lives', 'order_shipped-v2', 'a'.repeat(63)]) t.equal((await api('POST', '/templates', { ...welcome, alias })).status, 201, alias);
  const taken = await api('POST', '/templates', { ...welcome, alias: 'a' });
  t.match(taken.body, { statusCode: 422, name: 'invalid_parameter' });
  const other = (await api('POST', '/templates', { ...welcome, alias: 'other-alias' })).body.id;
  t.match((await api('PATCH', `/templates/${other}`, { alias: 'a' })).body, { name: 'invalid_parameter' });
});

t.test('variables: declared and used, types, at most 200', async (t) => {
  const refuse = async (body: Record<string, unknown>, name: string, why: string, status = 422) => {
    const r = await api('POST', '/templates', { name: 'V', html: '<p>x</p>', ...body });
    t.equal(r.status, status, why);
    t.equal(r.body.name, name, `${why}: ${JSON.stringify(r.body)}`);
  };
  await refuse({ html: '<p>{{undeclared}}</p>' }, 'validation_error', 'a placeholder not declared');
  await refuse({ variables: [{ key: 'unused', type: 'string' }] }, 'validation_error', 'a declared variable not used');
  await refuse({ html: '{{a}}', variables: [{ key: 'a', type: 'date' }] }, 'validation_error', 'an unknown type (the body\'s schema)', 400);
  await refuse({ html: '{{a}}', variables: [{ key: 'a', type: 'number', fallback_value: 'x' }] }, 'validation_error', 'a fallback of the wrong type');
  await refuse({ html: '{{a}}', variables: [{ key: 'a', type: 'string' }, { key: 'a', type: 'string' }] }, 'validation_error', 'a key twice');
  const many = Array.from({ length: 201 }, (_, i) => ({ key: `k${i}`, type: 'string' }));
  await refuse({ html: many.map((v) => `{{${v.key}}}`).join(''), variables: many }, 'validation_error', '201 variables');
  await refuse({ html: '{{{event.total|0|currency:usd}}}' }, 'validation_error', 'an unreadable format');
  await refuse({ html: '{{{event.when||date:full}}}' }, 'validation_error', 'an unknown date style');
  await refuse({ html: '{{{item.title}}}' }, 'validation_error', 'an item slot outside a repeat');
  await refuse({ html: '{{brand.unknown}}' }, 'validation_error', 'an unknown brand token');
  await refuse({ name: undefined }, 'missing_required_field', 'no name');
  await refuse({ html: undefined }, 'missing_required_field', 'neither html nor starter');
  await refuse({ starter: 'nope', html: undefined }, 'validation_error', 'an unknown starter');
  await refuse({ brand_overrides: { primary_color: 'red' } }, 'validation_error', 'a brand override the kit would refuse');
  await refuse({ brand_overrides: { colour: '#ffffff' } }, 'validation_error', 'an unknown brand field (the body\'s schema)', 400);
  const all = Array.from({ length: 200 }, (_, i) => ({ key: `k${i}`, type: i % 2 ? 'string' : 'number' }));
  const ok = await api('POST', '/templates', { name: 'All', html: all.map((v) => `{{ ${v.key} }}`).join(' '), variables: all });
  t.equal(ok.status, 201, '200 variables, all used');
  const bad = await call(base, 'POST', '/templates', { token: team.token, raw: '{"name": 1' });
  t.equal(bad.status, 400);
});

t.test('permissions: reads with either key, writes need full_access; another team\'s template is 404', async (t) => {
  const id = (await api('POST', '/templates', welcome)).body.id;
  const sending = await app.newTeam('Sending key', 'sending_access');
  const own = (await api('POST', '/templates', welcome)).body.id;
  t.equal((await api('GET', `/templates/${id}`, undefined, sending.token)).status, 404, 'another team');
  t.equal((await api('GET', '/templates', undefined, sending.token)).status, 200);
  for (const [method, path] of [['POST', '/templates'], ['PATCH', `/templates/${own}`], ['DELETE', `/templates/${own}`], ['POST', `/templates/${own}/publish`], ['POST', `/templates/${own}/duplicate`]]) {
    const r = await api(method!, path!, welcome, sending.token);
    t.equal(r.status, 401, `${method} ${path}`);
    t.equal(r.body.name, 'restricted_api_key');
  }
  const other = await app.newTeam('Other');
  for (const [method, path] of [['GET', `/templates/${id}`], ['PATCH', `/templates/${id}`], ['DELETE', `/templates/${id}`], ['POST', `/templates/${id}/publish`], ['POST', `/templates/${id}/duplicate`], ['POST', `/templates/${id}/preview`], ['POST', `/templates/${id}/checks`]]) {
    const r = await api(method!, path!, method === 'PATCH' ? { name: 'x' } : undefined, other.token);
    t.equal(r.status, 404, `${method} ${path}`);
    t.equal(r.body.name, 'not_found');
  }
});
