import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { pruneImportFiles } from '../../core/retention/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentHashOf, consentRecords, platformEvents, teamEvents } from '../helpers/audience.js';
import { finishedImport, runImport, uploadImport } from '../helpers/contact-imports.js';
import { call } from '../helpers/http.js';

// Contact imports over raw HTTP with the jobs role working the rows: the spec's row rules and
// counts, hostile files (BOM, CRLF, quoted newlines, wrong types, duplicates), every refusal of
// the upload with its status and name, the reads, and the file's deletion a week later.
const app = await startTestAppliance({ roles: ['api', 'jobs'], env: { SVC_WORK_POLL_MS: '50' } });
t.teardown(() => app.stop());
const base = app.baseUrl;
const db = app.appliance.services.database.db;
const importsDir = join(app.config.data_dir, 'imports');

const contact = async (token: string, ref: string) => (await call(base, 'GET', `/contacts/${encodeURIComponent(ref)}`, { token })).body;
const failuresOf = async (token: string, id: string) => (await call(base, 'GET', `/contacts/imports/${id}/failures`, { token })).body;

t.test('happy path: 201 {object, id}, rows become contacts with typed properties, counts, no contact.* webhook', async (t) => {
  const { token, teamId } = await app.newTeam('Happy');
  const csv = 'Email,First,Last,Plan,Seats,VIP\nann@example.com,Ann,Lee,pro,3,true\nbo@example.com,Bo,,free,1,no\ncy@example.com,,,,,\n';
  const r = await uploadImport(base, token, csv, {
    column_map: { email: 'Email', first_name: 'First', last_name: 'Last', properties: { plan: 'Plan', seats: { column: 'Seats', type: 'number' }, vip: { column: 'VIP', type: 'boolean' } } },
  });
  t.equal(r.status, 201, JSON.stringify(r.body));
  t.same(Object.keys(r.body).sort(), ['id', 'object']);
  t.equal(r.body.object, 'contact_import');
  const done = await finishedImport(base, token, r.body.id);
  t.match(done, { object: 'contact_import', id: r.body.id, status: 'completed', created_at: String, completed_at: String, counts: { total: 3, created: 3, updated: 0, skipped: 0, failed: 0 } });
  t.match(await contact(token, 'ann@example.com'), {
    email: 'ann@example.com', first_name: 'Ann', last_name: 'Lee', subscription_status: 'subscribed',
    properties: { plan: { type: 'string', value: 'pro' }, seats: { type: 'number', value: 3 }, vip: { type: 'boolean', value: true } },
  });
  t.match(await contact(token, 'bo@example.com'), { first_name: 'Bo', last_name: null, properties: { vip: { value: false }, seats: { value: 1 } } });
  t.same((await contact(token, 'cy@example.com')).properties, {}, 'empty cells give no values');
  const declared = (await call(base, 'GET', '/contact-properties', { token })).body.data.map((p: { key: string; type: string }) => [p.key, p.type]).sort();
  t.same(declared, [['plan', 'string'], ['seats', 'number'], ['vip', 'boolean']], 'properties declared by the map\'s types');
  t.same(await teamEvents(app, teamId, 'contact.'), [], 'no contact.created webhook per row');
  t.equal((await platformEvents(app, teamId)).filter((e) => e.type === 'svc:contact.created').length, 3);
  const consent = await consentRecords(app, teamId);
  t.equal(consent.length, 3);
  t.match(consent.find((c) => c.email_hash === consentHashOf(app, 'ann@example.com')), { kind: 'subscription', value: 'subscribed', source: 'import', user_agent: 'svc-tests/1.0', ip: /127\.0\.0\.1/ });
  const row = await db.selectFrom('contact_imports').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
  t.match(row, { created_by: String, file_name: 'contacts.csv', file_bytes: Buffer.byteLength(csv), on_conflict: 'skip' }, 'the import row records who, what and how');
  const file = join(importsDir, `${r.body.id}.csv`);
  t.equal(statSync(file).mode & 0o777, 0o600, 'the stored file is owner-only');
  const list = (await call(base, 'GET', '/contacts/imports', { token })).body;
  t.same(list, { object: 'list', has_more: false, data: [done] });
});

t.test('hostile file: BOM, CRLF, quoted newlines and quotes, blank lines, wrong types failed with their row numbers', async (t) => {
  const { token } = await app.newTeam('Hostile');
  const csv = '\ufeffemail,name,note,age\r\n'
    + 'a@example.com,"Lee, Ann","line one\r\nline two",30\r\n'
    + '\r\n'
    + 'not-an-address,Bad,,1\r\n'
    + 'b@example.com,"Bo ""B"" Ray",plain,thirty\r\n'
    + ',No Address,,\r\n'
    + 'c@example.com,5" screen,"x",0x10\r\n'
    + 'd@example.com,Dee,"multi\nline\n",41';
  const done = await runImport(base, token, csv, {
    column_map: { email: 'email', first_name: 'name', properties: { note: 'note', age: { column: 'age', type: 'number' } } },
  });
  t.match(done, { status: 'completed', counts: { total: 6, created: 2, failed: 4, updated: 0, skipped: 0 } });
  t.match(await contact(token, 'a@example.com'), { first_name: 'Lee, Ann', properties: { note: { value: 'line one\r\nline two' }, age: { value: 30 } } });
  t.match(await contact(token, 'd@example.com'), { first_name: 'Dee', properties: { note: { value: 'multi\nline' }, age: { value: 41 } } });
  const failures = await failuresOf(token, done.id);
  t.same(failures, {
    object: 'list', has_more: false, data: [
      { row_number: 2, email: 'not-an-address', reason: 'The email address is not usable.' },
      { row_number: 3, email: 'b@example.com', reason: 'Property `age` is a number; the value does not match.' },
      { row_number: 4, email: null, reason: 'The row has no email address.' },
      { row_number: 5, email: 'c@example.com', reason: 'Property `age` is a number; the value does not match.' },
    ],
  });
});

t.test('an address twice in the file: created by the first row, skipped or updated by the next', async (t) => {
  const { token } = await app.newTeam('Duplicates');
  const csv = 'email,first_name\nsam@example.com,First\nSAM@example.com,Second\n';
  const skipped = await runImport(base, token, csv);
  t.match(skipped.counts, { total: 2, created: 1, skipped: 1, updated: 0, failed: 0 });
  t.equal((await contact(token, 'sam@example.com')).first_name, 'First');
  const { token: other } = await app.newTeam('Duplicates upsert');
  const upserted = await runImport(base, other, csv, { on_conflict: 'upsert' });
  t.match(upserted.counts, { total: 2, created: 1, updated: 1, skipped: 0 });
  t.match(await contact(other, 'sam@example.com'), { email: 'sam@example.com', first_name: 'Second' });
});

t.test('on_conflict: skip leaves an existing contact alone, upsert updates it and never lifts an opt-out', async (t) => {
  const { token, teamId } = await app.newTeam('Conflicts');
  await call(base, 'POST', '/contacts', { token, body: { email: 'kim@example.com', first_name: 'Kim', properties: { tier: 'gold' } } });
  await call(base, 'POST', '/contacts', { token, body: { email: 'out@example.com', first_name: 'Out', unsubscribed: true } });
  const csv = 'email,first_name,unsubscribed,tier\nkim@example.com,Kimberly,,silver\nout@example.com,Outer,false,bronze\nnew@example.com,New,true,\n';
  const map = { email: 'email', first_name: 'first_name', unsubscribed: 'unsubscribed', properties: { tier: 'tier' } };
  const skip = await runImport(base, token, csv, { column_map: map, on_conflict: 'skip' });
  t.match(skip.counts, { total: 3, created: 1, skipped: 2, updated: 0 });
  t.match(await contact(token, 'kim@example.com'), { first_name: 'Kim', properties: { tier: { value: 'gold' } } });
  t.match(await contact(token, 'new@example.com'), { unsubscribed: true, subscription_status: 'unsubscribed' }, 'unsubscribed true imports an opt-out');
  const before = (await consentRecords(app, teamId)).length;
  const upsert = await runImport(base, token, csv, { column_map: map, on_conflict: 'upsert' });
  t.match(upsert.counts, { total: 3, created: 0, updated: 3, skipped: 0 });
  t.match(await contact(token, 'kim@example.com'), { first_name: 'Kimberly', subscription_status: 'subscribed', properties: { tier: { value: 'silver' } } });
  t.match(await contact(token, 'out@example.com'), { first_name: 'Outer', unsubscribed: true, subscription_status: 'unsubscribed', properties: { tier: { value: 'bronze' } } }, 'false does not resubscribe');
  t.equal((await consentRecords(app, teamId)).length, before, 'no status changed: no consent record');
  t.same((await teamEvents(app, teamId, 'contact.')).map((e) => e.type), ['contact.created', 'contact.created'], 'only the API\'s creates raised webhooks');
  const optOut = await runImport(base, token, 'email,unsubscribed\nkim@example.com,yes\n', { on_conflict: 'upsert' });
  t.match(optOut.counts, { updated: 1 });
  t.equal((await contact(token, 'kim@example.com')).subscription_status, 'unsubscribed');
  t.match((await consentRecords(app, teamId)).at(-1), { kind: 'subscription', value: 'unsubscribed', source: 'import' });
});

t.test('topics: choices recorded for imported contacts; an existing opt-out choice is kept', async (t) => {
  const { token, teamId } = await app.newTeam('Topics');
  const topic = (await call(base, 'POST', '/topics', { token, body: { name: 'News', default_subscription: 'opt_out' } })).body;
  const held = (await call(base, 'POST', '/contacts', { token, body: { email: 'held@example.com', topics: [{ id: topic.id, subscription: 'opt_out' }] } })).body;
  const done = await runImport(base, token, 'email\nfresh@example.com\nheld@example.com\n', { on_conflict: 'upsert', topics: [{ id: topic.id, subscription: 'opt_in' }] });
  t.match(done.counts, { created: 1, updated: 1 });
  const topicsOf = async (ref: string) => (await call(base, 'GET', `/contacts/${ref}/topics`, { token })).body.data.map((x: { subscription: string }) => x.subscription);
  t.same(await topicsOf('fresh@example.com'), ['opt_in']);
  t.same(await topicsOf(held.id), ['opt_out'], 'a file does not opt a contact back in');
  const topicConsent = (await consentRecords(app, teamId)).filter((c) => c.kind === 'topic' && c.source === 'import');
  t.equal(topicConsent.length, 1);
  const unknown = await uploadImport(base, token, 'email\nx@example.com\n', { topics: [{ id: '01900000-0000-7000-8000-000000000009', subscription: 'opt_in' }] });
  t.equal(unknown.status, 422);
  t.match(unknown.body, { name: 'validation_error', errors: [{ path: 'topics[0].id' }] });
});

t.test('upload refusals: status, name and the place, and no file left behind', async (t) => {
  const { token } = await app.newTeam('Refusals');
  const cases: [string, Parameters<typeof uploadImport>[2], Parameters<typeof uploadImport>[3], number, string, string | undefined][] = [
    ['no email in column_map', 'email,name\na@example.com,A\n', { column_map: { first_name: 'name' } }, 422, 'validation_error', 'column_map.email'],
    ['a column the header lacks', 'email,name\na@example.com,A\n', { column_map: { email: 'email', last_name: 'surname' } }, 422, 'validation_error', 'column_map.last_name'],
    ['a property column the header lacks', 'email\na@example.com\n', { column_map: { email: 'email', properties: { plan: 'Plan' } } }, 422, 'validation_error', 'column_map.properties.plan.column'],
    ['a bad property type', 'email,p\na@example.com,1\n', { column_map: { email: 'email', properties: { p: { column: 'p', type: 'date' } } } }, 422, 'validation_error', 'column_map.properties.p.type'],
    ['column_map not JSON', 'email\na@example.com\n', { column_map: '{email: "email"' }, 422, 'validation_error', 'column_map'],
    ['no email column and no map', 'mail\na@example.com\n', {}, 422, 'validation_error', 'column_map'],
    ['bad on_conflict', 'email\na@example.com\n', { on_conflict: 'replace' }, 422, 'validation_error', 'on_conflict'],
    ['segments', 'email\na@example.com\n', { segments: [{ id: '01900000-0000-7000-8000-000000000001' }] }, 422, 'validation_error', 'segments[0].id'],
    ['segments not JSON', 'email\na@example.com\n', { segments: 'nope' }, 422, 'validation_error', 'segments'],
    ['empty file', '', {}, 422, 'validation_error', 'file'],
    ['an unreadable header', '"email\n', {}, 422, 'validation_error', 'file'],
    ['no file', 'email\n', { noFile: true }, 422, 'missing_required_field', 'file'],
    ['an unknown field', 'email\na@example.com\n', { raw: { mode: 'fast' } }, 400, 'validation_error', 'mode'],
  ];
  for (const [what, csv, options, status, name, path] of cases) {
    const r = await uploadImport(base, token, csv, options);
    t.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
    t.equal(r.body?.name, name, what);
    if (path) t.equal(r.body?.errors?.[0]?.path, path, `${what}: names ${path}`);
  }
  const json = await call(base, 'POST', '/contacts/imports', { token, body: { file: 'email\n' } });
  t.equal(json.status, 400, 'a JSON body is not a multipart upload');
  t.equal(json.body.name, 'validation_error');
  t.same((await call(base, 'GET', '/contacts/imports', { token })).body.data, [], 'no import was created');
  const owned = new Set((await db.selectFrom('contact_imports').select('id').execute()).map((r) => `${r.id}.csv`));
  const { readdirSync } = await import('node:fs');
  t.same(readdirSync(importsDir).filter((f) => !owned.has(f)), [], 'every refused upload\'s file is gone');
});

t.test('header only: completed with zero counts', async (t) => {
  const { token } = await app.newTeam('Header only');
  const done = await runImport(base, token, 'email,first_name\r\n');
  t.match(done, { status: 'completed', counts: { total: 0, created: 0, updated: 0, skipped: 0, failed: 0 } });
});

t.test('reads: status filter, pagination, cross-team 404, bad parameters', async (t) => {
  const { token } = await app.newTeam('Reads');
  const first = await runImport(base, token, 'email\none@example.com\n');
  const second = await runImport(base, token, 'email\ntwo@example.com\n');
  const completed = (await call(base, 'GET', '/contacts/imports?status=completed', { token })).body;
  t.same(completed.data.map((i: { id: string }) => i.id), [second.id, first.id], 'newest first');
  t.same((await call(base, 'GET', '/contacts/imports?status=queued', { token })).body.data, []);
  const page = (await call(base, 'GET', '/contacts/imports?limit=1', { token })).body;
  t.same([page.has_more, page.data[0].id], [true, second.id]);
  t.same((await call(base, 'GET', `/contacts/imports?limit=1&after=${second.id}`, { token })).body.data.map((i: { id: string }) => i.id), [first.id]);
  const bad = await call(base, 'GET', '/contacts/imports?status=done', { token });
  t.equal(bad.status, 422);
  t.equal(bad.body.name, 'invalid_parameter');
  const { token: stranger } = await app.newTeam('Stranger');
  for (const path of [`/contacts/imports/${first.id}`, `/contacts/imports/${first.id}/failures`, '/contacts/imports/not-an-id']) {
    const r = await call(base, 'GET', path, { token: stranger });
    t.equal(r.status, 404, path);
    t.equal(r.body.name, 'not_found');
  }
  t.same((await call(base, 'GET', '/contacts/imports', { token: stranger })).body.data, []);
  const { token: reader } = await app.newTeam('Reader', 'sending_access');
  const refused = await uploadImport(base, reader, 'email\na@example.com\n');
  t.equal(refused.status, 401, 'a sending_access key cannot import');
  t.equal(refused.body.name, 'restricted_api_key');
});

t.test('the file is deleted seven days after the import finished; the import and its counts stay', async (t) => {
  const { token } = await app.newTeam('Retention');
  const done = await runImport(base, token, 'email\nkeep@example.com\n');
  const file = join(importsDir, `${done.id}.csv`);
  t.ok(existsSync(file));
  const files = app.appliance.services.importFiles;
  const at = (ms: number) => ({ now: () => new Date(Date.parse(done.completed_at) + ms) });
  t.match(await pruneImportFiles({ db, files, clock: at(6 * 86_400_000) }), { deleted: 0 }, 'six days: kept');
  t.ok(existsSync(file));
  const pruned = await pruneImportFiles({ db, files, clock: at(7 * 86_400_000 + 1000) });
  t.ok(pruned.deleted >= 1, `the week-old files went (${pruned.deleted}, this file system's other imports included)`);
  t.notOk(existsSync(file), 'the file is gone');
  t.match((await call(base, 'GET', `/contacts/imports/${done.id}`, { token })).body, { status: 'completed', counts: { total: 1, created: 1 } });
  const row = await db.selectFrom('contact_imports').select('file_deleted_at').where('id', '=', done.id).executeTakeFirstOrThrow();
  t.type(row.file_deleted_at, 'string');
});

t.test('segments: imported contacts are added to the named segments by hand, with svc:segment.entered', async (t) => {
  const { token, teamId } = await app.newTeam('Segmented');
  const seg = await call(base, 'POST', '/segments', { token, body: { name: 'Imported' } });
  t.equal(seg.status, 201);
  const done = await runImport(base, token, 'email\nann@example.com\nbo@example.com\n', { column_map: { email: 'email' }, segments: [{ id: seg.body.id }] });
  t.match(done, { status: 'completed', counts: { created: 2 } });
  const members = (await call(base, 'GET', `/segments/${seg.body.id}/contacts`, { token })).body.data.map((c: { email: string }) => c.email).sort();
  t.same(members, ['ann@example.com', 'bo@example.com']);
  t.equal((await platformEvents(app, teamId)).filter((e) => e.type === 'svc:segment.entered').length, 2);
});
