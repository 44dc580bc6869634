import t from 'tap';
import { sql } from 'kysely';
import { newId } from '../../core/ids.js';
import { apiKeysRepo, authGenerationReader } from '../../storage/repos/index.js';
import { migrateToLatest, openDatabase } from '../../storage/sql/index.js';
import { domainsRepo } from '../../storage/repos/index.js';
import type { DomainRow } from '../../storage/repos/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { migrations } from '../../storage/sql/migrations/index.js';
import { requestLogsRepo } from '../../storage/repos/index.js';
import { suppressionsRepo } from '../../storage/repos/index.js';
import { teamsRepo } from '../../storage/repos/index.js';
import { iso, keyRow, openPgFixture, requestLogRow, teamRow } from '../helpers/pg-rows.js';

// The repositories on a real PostgreSQL (test/helpers/postgres.ts), in a database of this file's
// own: what SQLite does in every other test, shown here on the second dialect.
const fixture = await openPgFixture();
t.teardown(() => fixture.close());
const { database } = fixture;
const db = database.db;
const generation = async (on = db) => Number((await on.selectFrom('auth_generation').select('value').where('id', '=', 1).executeTakeFirstOrThrow()).value);

t.test('migrations apply from empty and are idempotent on restart', async (t) => {
  t.equal(database.kind, 'postgres');
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  t.same(applied.rows.map((r) => r.name), Object.keys(migrations).sort(), 'every migration recorded once');
  const tables = await sql<{ n: number }>`select count(*) as n from information_schema.tables where table_schema = 'public' and table_name not like 'kysely%'`.execute(db);
  t.ok(tables.rows[0]!.n >= 25, `the tables exist (${tables.rows[0]!.n}); count(*) comes back as a number`);
  t.equal(typeof tables.rows[0]!.n, 'number');
  const again = await migrateToLatest(db);
  t.same(again.results, [], 'a second run applies nothing');
  const restarted = await openDatabase({ url: fixture.pg.url, path: '/nonexistent/svc.sqlite', synchronous: 'FULL' });
  t.teardown(() => restarted.close());
  t.equal((await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(restarted.db)).rows[0]!.n, Object.keys(migrations).length, 'a restart adds no migration row');
  await t.resolves(restarted.ping(), 'ping answers');
  t.throws(() => restarted.sqlite, /PostgreSQL/, 'there is no SQLite handle to misuse');
});

t.test('a database_url of another scheme stops start-up naming the key', async (t) => {
  await t.rejects(openDatabase({ url: 'mysql://root@localhost/svc', path: '/nonexistent', synchronous: 'FULL' }),
    { message: 'config: database_url: must be empty (SQLite in data_dir) or a postgres:// or postgresql:// URL; got scheme "mysql"' });
});

t.test('teams', async (t) => {
  const repo = teamsRepo(db);
  const team = teamRow('Acme');
  await repo.insert(team);
  t.same(await repo.byId(team.id), team);
  t.same((await repo.byName('Acme')).map((r) => r.id), [team.id]);
  t.ok(await repo.setStatus(team.id, 'suspended'));
  t.equal((await repo.byId(team.id))?.status, 'suspended');
  t.notOk(await repo.setStatus(newId(), 'active'), 'an unknown team changes nothing');
});

t.test('api keys: round trip, search, auth_generation trigger, revocation seen from a second pool', async (t) => {
  const repo = apiKeysRepo(db);
  const team = teamRow('Keys');
  await teamsRepo(db).insert(team);
  const before = await generation();
  const key = keyRow(team.id, 'ÉCOLE production');
  await repo.insert(key);
  const other = keyRow(team.id, 'staging', { permission: 'sending_access' });
  await repo.insert(other);
  t.equal(await generation(), before + 2, 'each insert moves the counter (statement trigger)');
  t.same(await repo.byId(team.id, key.id), key);
  const found = await repo.byPublicId(key.public_id);
  t.same(found?.team, { id: team.id, name: team.name, status: team.status, created_at: team.created_at }, 'the key comes with its team');
  t.same((await repo.list(team.id, { status: 'all', search: 'école' }, { limit: 10 })).data.map((k) => k.id), [key.id], 'search folds non-ASCII case');
  t.same((await repo.list(team.id, { status: 'all', search: '%' }, { limit: 10 })).data, [], '% is literal');
  t.same((await repo.list(team.id, { status: 'all', permission: 'sending_access' }, { limit: 10 })).data.map((k) => k.id), [other.id]);
  const page = await repo.list(team.id, { status: 'all' }, { limit: 1 });
  t.same(page.data.map((k) => k.id), [other.id], 'newest first');
  t.ok(page.has_more);
  t.same((await repo.list(team.id, { status: 'all' }, { limit: 1, after: other.id })).data.map((k) => k.id), [key.id], 'the after cursor');

  const atTouch = await generation();
  await repo.touchLastUsed(new Map([[key.id, iso()]]));
  t.equal(await generation(), atTouch, 'last_used_at does not move the counter');
  t.ok((await repo.byId(team.id, key.id))?.last_used_at, 'last_used_at written (relaxed write transaction)');
  t.ok(await repo.rename(team.id, key.id, 'renamed'));
  t.equal(await generation(), atTouch, 'a rename does not either');

  const second = await fixture.other();
  const stamp = authGenerationReader(second);
  t.not(stamp(), stamp(), 'on PostgreSQL the key cache is off: the stamp never repeats');
  const seenBefore = await generation(second.db);
  t.ok(await repo.revoke(team.id, key.id, iso()));
  t.notOk(await repo.revoke(team.id, key.id, iso()), 'revoking twice changes nothing');
  t.equal((await apiKeysRepo(second.db).byPublicId(key.public_id))?.key.status, 'revoked', 'the other pool sees the revocation at once');
  t.equal(await generation(second.db), seenBefore + 1, 'and the counter moved for it');
  await teamsRepo(second.db).setStatus(team.id, 'suspended');
  t.equal(await generation(), seenBefore + 2, 'a team suspended from the other pool moves it too');
});

t.test('request logs: batch insert, filters, cursors, pruning', async (t) => {
  const repo = requestLogsRepo(db);
  const team = teamRow('Logs');
  const old = requestLogRow(team.id, { created_at: '2020-01-01T00:00:00.000Z', path: '/domains', endpoint: '/domains' });
  const failed = requestLogRow(team.id, { response_status: 422, source: 'sdk:node', path: '/EMAILS/Abc', endpoint: '/emails' });
  const ok = requestLogRow(team.id);
  await repo.insertMany([old, failed, ok]);
  const all = await repo.list(team.id, {}, { limit: 10 });
  t.same(all.data.map((r) => r.id), [ok.id, failed.id, old.id], 'newest first');
  t.notOk('request_body' in all.data[0]!, 'the list leaves bodies out');
  t.same((await repo.list(team.id, { status: 422 }, { limit: 10 })).data.map((r) => r.id), [failed.id]);
  t.same((await repo.list(team.id, { source: 'sdk:node' }, { limit: 10 })).data.map((r) => r.id), [failed.id]);
  t.same((await repo.list(team.id, { excludeSource: 'sdk:node' }, { limit: 10 })).data.map((r) => r.id), [ok.id, old.id]);
  t.same((await repo.list(team.id, { search: 'emails/abc' }, { limit: 10 })).data.map((r) => r.id), [ok.id, failed.id], 'search ignores case');
  t.same((await repo.list(team.id, { startDate: '2021-01-01T00:00:00.000Z' }, { limit: 10 })).data.map((r) => r.id), [ok.id, failed.id]);
  t.same((await repo.list(team.id, { endDate: '2021-01-01T00:00:00.000Z' }, { limit: 10 })).data.map((r) => r.id), [old.id]);
  t.same((await repo.list(team.id, {}, { limit: 10, before: old.id })).data.map((r) => r.id), [ok.id, failed.id], 'the before cursor');
  t.same(await repo.byId(team.id, ok.id), ok, 'byId has the bodies');
  t.equal(await repo.deleteOlderThan('2021-01-01T00:00:00.000Z', 100, { except: [] }), 1, 'pruning deletes the old one');
  t.equal((await repo.list(team.id, {}, { limit: 10 })).data.length, 2);
});

t.test('events: seq assigned, read in order, found by id', async (t) => {
  const repo = eventsRepo(db);
  const team = teamRow('Events');
  const ids = [newId(), newId(), newId()];
  for (const id of ids) await repo.insert({ id, team_id: team.id, type: 'email.sent', created_at: iso(), data: JSON.stringify({ id }) });
  const read = (await repo.after(0, 1000)).filter((e) => ids.includes(e.id));
  t.same(read.map((e) => e.id), ids, 'in insert order');
  t.equal(typeof read[0]!.seq, 'number', 'seq (bigint) comes back as a number');
  t.ok(read[0]!.seq < read[1]!.seq && read[1]!.seq < read[2]!.seq);
  t.same((await repo.after(read[1]!.seq, 10)).map((e) => e.id), [ids[2]]);
  t.equal((await repo.byId(team.id, ids[1]!))?.seq, read[1]!.seq);
});

const domainRow = (teamId: string, name: string, extra: Partial<DomainRow> = {}): DomainRow => ({
  id: newId(), team_id: teamId, name, region: 'us-east-1', sending: 'enabled', receiving: 'disabled', open_tracking: 0, click_tracking: 0,
  tls: 'opportunistic', custom_return_path: 'send', tracking_subdomain: 'links', receiving_host: 'inbound.example', receiving_name: name,
  status: 'pending', record_states: '{}', sending_ready: 0, owner_verified_at: null, released_at: null, last_checked_at: null,
  provider_token: null, created_at: iso(), updated_at: iso(), ...extra,
});

t.test('domains: round trip, one verified holder per name (partial unique index), DKIM keys', async (t) => {
  const repo = domainsRepo(db);
  const a = domainRow(newId(), 'shared.example', { owner_verified_at: iso(), sending_ready: 1 });
  const b = domainRow(newId(), 'shared.example');
  await repo.insert(a);
  await repo.insert(b);
  t.same(await repo.byId(a.team_id, a.id), a);
  t.equal((await repo.owner('shared.example'))?.id, a.id);
  t.same(await repo.sendingReadyNames(), ['shared.example']);
  await t.rejects(repo.update(b.id, { owner_verified_at: iso() }), { code: '23505' }, 'a second verified holder is refused');
  await repo.update(a.id, { released_at: iso() });
  await repo.update(b.id, { owner_verified_at: iso() });
  t.equal((await repo.owner('shared.example'))?.id, b.id, 'once released, another team may hold it');
  await repo.insertKey({ id: newId(), domain_id: b.id, selector: 's1', public_key: 'pk', private_key_sealed: 'sealed', state: 'active', created_at: iso(), activated_at: iso(), retire_at: null });
  t.equal((await repo.keys(b.id)).length, 1);
  await repo.remove(b.id);
  t.equal(await repo.byIdAnyTeam(b.id), undefined, 'removed with its keys');
});

t.test('suppressions: insert once per address, search, delete', async (t) => {
  const repo = suppressionsRepo(db);
  const teamId = newId();
  const row = { id: newId(), team_id: teamId, email: 'Bob@Example.NET', email_key: 'bob@example.net', origin: 'bounce' as const, source_id: null, created_at: iso() };
  t.ok(await repo.insertIfAbsent(row));
  t.notOk(await repo.insertIfAbsent({ ...row, id: newId() }), 'the same address again inserts nothing (ON CONFLICT DO NOTHING)');
  t.equal((await repo.byEmailKey(teamId, 'bob@example.net'))?.id, row.id);
  t.same((await repo.list(teamId, { search: 'EXAMPLE' }, { limit: 10 })).data.map((r) => r.id), [row.id], 'search ignores case, as SQLite LIKE does');
  t.same((await repo.list(teamId, { origin: 'complaint' }, { limit: 10 })).data, []);
  t.ok(await repo.delete(teamId, row.id));
  t.equal(await repo.byId(teamId, row.id), undefined);
});
