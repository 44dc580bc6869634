import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';

// Saved blocks over raw HTTP: their routes, a layout naming one by `saved_block_id` and holding a
// copy, an edit rewriting every live template's published version and open draft that uses it
// (sends render the new content), a deletion leaving the copies, refusals and another team's 404.
const app = await startTestAppliance();
t.teardown(() => app.stop());
const team = await app.newTeam('Saved blocks');
const api = (method: string, path: string, body?: unknown, token = team.token) => call(app.baseUrl, method, path, { token, body });
const sends = app.appliance.services.api.content.templateSends;

const header = { columns: [[{ type: 'heading', text: 'Acme header one', level: 2 }]], background_color: '#eeeeee' };
const footer = { type: 'text', text: 'Footer says {{first_name}}' };
const newBlock = async (body: unknown) => {
  const r = await api('POST', '/saved-blocks', body);
  if (r.status !== 201) throw new Error(`saved block: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id as string;
};
const layoutUsing = (headerId: string, footerId?: string, extra = 'Body text') => ({
  sections: [
    { saved_block_id: headerId },
    { columns: [[{ type: 'text', text: extra }, ...(footerId ? [{ saved_block_id: footerId }] : [])]] },
  ],
});
const variables = [{ key: 'first_name', type: 'string', fallback_value: 'friend' }];

t.test('create, list, get, update the name, delete', async (t) => {
  const created = await api('POST', '/saved-blocks', { name: 'Header', kind: 'section', content: header });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.same(Object.keys(created.body).sort(), ['id', 'object']);
  t.equal(created.body.object, 'saved_block');
  const id = created.body.id as string;
  const got = await api('GET', `/saved-blocks/${id}`);
  t.equal(got.status, 200);
  t.match(got.body, { object: 'saved_block', id, name: 'Header', kind: 'section', content: header });
  const other = await newBlock({ name: 'Footer', kind: 'block', content: footer });
  const list = await api('GET', '/saved-blocks?limit=1');
  t.equal(list.status, 200);
  t.match(list.body, { object: 'list', has_more: true });
  t.equal(list.body.data.length, 1);
  t.equal(list.body.data[0].id, other, 'newest first');
  const renamed = await api('PATCH', `/saved-blocks/${id}`, { name: '  Top  ' });
  t.same(renamed.body, { object: 'saved_block', id });
  t.equal((await api('GET', `/saved-blocks/${id}`)).body.name, 'Top');
  t.same((await api('DELETE', `/saved-blocks/${id}`)).body, { object: 'saved_block', id, deleted: true });
  t.equal((await api('GET', `/saved-blocks/${id}`)).status, 404);
  t.equal((await api('DELETE', `/saved-blocks/${id}`)).status, 404, 'deleting twice');
  t.notOk((await api('GET', '/saved-blocks')).body.data.some((b: { id: string }) => b.id === id), 'gone from the list');
});

t.test('a layout holds a copy beside the reference; an edit reaches published versions and open drafts', async (t) => {
  const headerId = await newBlock({ name: 'Header', kind: 'section', content: header });
  const footerId = await newBlock({ name: 'Footer', kind: 'block', content: footer });
  const made = await api('POST', '/templates', { name: 'Uses both', subject: 'Hi', layout: layoutUsing(headerId, footerId), variables });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const published = made.body.id as string;
  const stored = (await api('GET', `/templates/${published}`)).body;
  t.match(stored.layout.sections[0], { saved_block_id: headerId, columns: header.columns, background_color: '#eeeeee' }, 'the section copied in');
  t.match(stored.layout.sections[1].columns[0][1], { saved_block_id: footerId, type: 'text', text: footer.text }, 'the block copied in');
  await api('POST', `/templates/${published}/publish`);
  const v1 = (await api('GET', `/templates/${published}`)).body.current_version_id as string;
  const before = await sends.forContacts(team.teamId, published);
  t.match(before.render({ contact: null, audience: null }).html, /Acme header one/);

  const draftOnly = (await api('POST', '/templates', { name: 'Draft only', subject: 'Hi', layout: layoutUsing(headerId) })).body.id as string;
  const unrelated = (await api('POST', '/templates', { name: 'Unrelated', subject: 'Hi', layout: layoutUsing(await newBlock({ name: 'H2', kind: 'section', content: header })) })).body.id as string;
  const unrelatedBefore = (await api('GET', `/templates/${unrelated}`)).body;

  const edited = await api('PATCH', `/saved-blocks/${headerId}`, { content: { columns: [[{ type: 'heading', text: 'Acme header two' }], [{ type: 'text', text: 'Right' }]] } });
  t.same(edited.body, { object: 'saved_block', id: headerId }, JSON.stringify(edited.body));
  const after = await sends.forContacts(team.teamId, published);
  t.equal(after.versionId, v1, 'the published version is rewritten in place, not republished');
  const html = after.render({ contact: null, audience: null }).html;
  t.match(html, /Acme header two/, 'a send renders the new content');
  t.notMatch(html, /Acme header one/);
  t.match(html, /Footer says friend/, 'the other saved block is untouched');
  const view = (await api('GET', `/templates/${published}`)).body;
  t.match(view, { status: 'published', has_unpublished_versions: false, current_version_id: v1 });
  t.equal(view.layout.sections[0].saved_block_id, headerId, 'the reference is kept');
  t.equal(view.layout.sections[0].background_color, undefined, 'the stored copy is the new content');
  t.equal(view.layout.sections[0].columns.length, 2);
  t.match(view.text, /Acme header two/, 'the text part is made again');
  const resolved = await sends.resolve(team.teamId, { id: published });
  t.match(resolved.html, /Acme header two/, 'POST /emails renders it too');

  const draft = (await api('GET', `/templates/${draftOnly}`)).body;
  t.match(draft, { status: 'draft', current_version_number: 1 }, 'the draft-only template stays a draft');
  t.match((await api('POST', `/templates/${draftOnly}/preview`, {})).body.html, /Acme header two/, 'its draft carries the new content');
  t.same((await api('GET', `/templates/${unrelated}`)).body, unrelatedBefore, 'a template using another block is untouched');

  const footerEdit = await api('PATCH', `/saved-blocks/${footerId}`, { content: { type: 'text', text: 'Plain footer now' } });
  t.equal(footerEdit.status, 200, 'a declared variable the new content leaves unused does not refuse the edit');
  t.match((await sends.forContacts(team.teamId, published)).render({ contact: null, audience: null }).html, /Plain footer now/);
});

t.test('an open draft after a publish: both versions rewritten, the old ones kept', async (t) => {
  const headerId = await newBlock({ name: 'Header', kind: 'section', content: header });
  const id = (await api('POST', '/templates', { name: 'Two versions', subject: 'Hi', layout: layoutUsing(headerId) })).body.id as string;
  await api('POST', `/templates/${id}/publish`);
  await api('PATCH', `/templates/${id}`, { layout: layoutUsing(headerId, undefined, 'Second body') });
  await api('PATCH', `/saved-blocks/${headerId}`, { content: { columns: [[{ type: 'text', text: 'Third header' }]] } });
  t.match((await sends.forContacts(team.teamId, id)).render({ contact: null, audience: null }).html, /Third header/, 'the published version');
  const preview = (await api('POST', `/templates/${id}/preview`, {})).body.html as string;
  t.match(preview, /Third header/, 'the open draft');
  t.match(preview, /Second body/);
});

t.test('content a template cannot take refuses the edit and changes nothing', async (t) => {
  const blockId = await newBlock({ name: 'Greeting', kind: 'block', content: { type: 'text', text: 'Hello' } });
  const id = (await api('POST', '/templates', { name: 'Strict', subject: 'Hi', layout: layoutUsing(await newBlock({ name: 'H', kind: 'section', content: header }), blockId) })).body.id as string;
  const r = await api('PATCH', `/saved-blocks/${blockId}`, { content: { type: 'text', text: 'Hello {{undeclared}}' } });
  t.equal(r.status, 422);
  t.equal(r.body.name, 'validation_error');
  t.match(r.body.message, /Strict/, 'names the template');
  t.match((await api('GET', `/saved-blocks/${blockId}`)).body.content, { text: 'Hello' }, 'the saved block is unchanged');
  t.match((await api('POST', `/templates/${id}/preview`, {})).body.html, /Hello/);
});

t.test('deleting a saved block leaves each template its copy; the next save keeps it without the reference', async (t) => {
  const headerId = await newBlock({ name: 'Doomed', kind: 'section', content: { columns: [[{ type: 'text', text: 'Doomed header' }]] } });
  const id = (await api('POST', '/templates', { name: 'Keeps copy', subject: 'Hi', layout: layoutUsing(headerId) })).body.id as string;
  await api('POST', `/templates/${id}/publish`);
  t.equal((await api('DELETE', `/saved-blocks/${headerId}`)).status, 200);
  t.match((await sends.forContacts(team.teamId, id)).render({ contact: null, audience: null }).html, /Doomed header/, 'sends keep the copy');
  const layout = (await api('GET', `/templates/${id}`)).body.layout;
  t.equal(layout.sections[0].saved_block_id, headerId, 'the stored layout is untouched');
  const saved = await api('PATCH', `/templates/${id}`, { layout });
  t.equal(saved.status, 200, JSON.stringify(saved.body));
  const next = (await api('GET', `/templates/${id}`)).body;
  t.equal(next.layout.sections[0].saved_block_id, undefined, 'the copy stays, the reference goes');
  t.match(next.html, /Doomed header/);
  const bare = await api('POST', '/templates', { name: 'Bare ref', subject: 'Hi', layout: { sections: [{ saved_block_id: headerId }] } });
  t.equal(bare.status, 422, 'a reference with no copy to keep');
  t.match(bare.body, { name: 'validation_error', errors: [{ path: 'layout.sections[0].saved_block_id' }] });
});

t.test('refusals over raw HTTP', async (t) => {
  const refuse = async (body: unknown, status: number, name: string, why: string) => {
    const r = await api('POST', '/saved-blocks', body);
    t.equal(r.status, status, `${why}: ${JSON.stringify(r.body)}`);
    t.equal(r.body?.name, name, why);
  };
  await refuse({ kind: 'block', content: footer }, 422, 'missing_required_field', 'no name');
  await refuse({ name: 'x', content: footer }, 422, 'missing_required_field', 'no kind');
  await refuse({ name: 'x', kind: 'block' }, 422, 'missing_required_field', 'no content');
  await refuse({ name: ' ', kind: 'block', content: footer }, 422, 'validation_error', 'a blank name');
  await refuse({ name: 'x', kind: 'row', content: footer }, 400, 'validation_error', 'an unknown kind (the body\'s schema)');
  await refuse({ name: 'x', kind: 'block', content: { type: 'marquee' } }, 422, 'validation_error', 'an unknown block type');
  await refuse({ name: 'x', kind: 'block', content: { type: 'preheader', text: 'p' } }, 422, 'validation_error', 'a preheader');
  await refuse({ name: 'x', kind: 'block', content: { type: 'button', text: 'Go', href: 'javascript:alert(1)' } }, 422, 'validation_error', 'a bad link');
  await refuse({ name: 'x', kind: 'section', content: { columns: [[], [], [], []] } }, 422, 'validation_error', 'four columns');
  await refuse({ name: 'x', kind: 'section', content: { columns: [[{ saved_block_id: 'a' }]] } }, 422, 'validation_error', 'a reference inside');
  const bad = await api('POST', '/saved-blocks', { name: 'x', kind: 'block', content: { type: 'heading' } });
  t.match(bad.body.errors, [{ path: 'content.text' }], 'field paths are the content\'s own');
  const raw = await call(app.baseUrl, 'POST', '/saved-blocks', { token: team.token, raw: '{"name": 1' });
  t.equal(raw.status, 400, 'unreadable JSON');
  const blockId = await newBlock({ name: 'B', kind: 'block', content: footer });
  const sectionId = await newBlock({ name: 'S', kind: 'section', content: header });
  t.equal((await api('PATCH', `/saved-blocks/${blockId}`, { kind: 'section' })).status, 422, 'a kind never changes');
  t.equal((await api('PATCH', `/saved-blocks/${blockId}`, { id: sectionId })).body.name, 'invalid_parameter', 'another id in the body');
  const misplaced = await api('POST', '/templates', { name: 'Wrong kind', subject: 'Hi', layout: { sections: [{ saved_block_id: blockId }] } });
  t.match(misplaced.body, { name: 'validation_error', errors: [{ path: 'layout.sections[0].saved_block_id' }] }, 'a block where a section goes');
  for (const path of ['/saved-blocks/not-an-id', '/saved-blocks/00000000-0000-4000-8000-000000000000']) {
    const r = await api('GET', path);
    t.equal(r.status, 404, path);
    t.equal(r.body.name, 'not_found');
  }
  t.equal((await api('PUT', `/saved-blocks/${blockId}`, {})).status, 405, 'a method the path does not have');
});

t.test('permissions: reads with either key, writes need full_access; another team\'s block is 404', async (t) => {
  const id = await newBlock({ name: 'Mine', kind: 'block', content: footer });
  const other = await app.newTeam('Other');
  for (const [method, path, body] of [['GET', `/saved-blocks/${id}`], ['PATCH', `/saved-blocks/${id}`, { name: 'x' }], ['DELETE', `/saved-blocks/${id}`]] as const) {
    const r = await api(method, path, body, other.token);
    t.equal(r.status, 404, `${method} ${path}`);
    t.equal(r.body.name, 'not_found');
  }
  t.notOk((await api('GET', '/saved-blocks', undefined, other.token)).body.data.some((b: { id: string }) => b.id === id), 'not in their list');
  const theirs = await api('POST', '/templates', { name: 'Borrow', subject: 'Hi', layout: { sections: [{ columns: [[{ saved_block_id: id }]] }] } }, other.token);
  t.equal(theirs.status, 422, 'another team\'s block cannot be named in a layout');
  const sending = await app.newTeam('Sending key', 'sending_access');
  t.equal((await api('GET', '/saved-blocks', undefined, sending.token)).status, 200);
  for (const [method, path] of [['POST', '/saved-blocks'], ['PATCH', `/saved-blocks/${id}`], ['DELETE', `/saved-blocks/${id}`]] as const) {
    const r = await api(method, path, { name: 'x', kind: 'block', content: footer }, sending.token);
    t.equal(r.status, 401, `${method} ${path}`);
    t.equal(r.body.name, 'restricted_api_key');
  }
});
