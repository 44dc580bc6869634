import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type RawBuilder } from 'kysely';
import { openDatabase, type Database } from '../../storage/sql/index.js';
import { contactPropertiesRepo, contactsBatchRepo, type ContactPropertyRow } from '../../storage/repos/index.js';
import { createTestDatabase } from '../helpers/postgres.js';

// Each value index holds the rows of its kind only (migration 038): a string's row in _text, a
// number's or boolean's in _num. The ranges a segment count starts from (every operator of
// rangeOf in storage/repos/segment-filter.ts) still read them, and deleting a property removes
// its values of either kind, on SQLite and on PostgreSQL.
const dir = mkdtempSync(join(tmpdir(), 'svc-value-indexes-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const team = 'team-1';
const property = (key: string, type: ContactPropertyRow['type']): ContactPropertyRow => ({
  id: `p-${key}`, team_id: team, key, key_fold: key, type, fallback_value: null, created_at: '2026-12-05T00:00:00.000Z',
});

async function seed(database: Database): Promise<void> {
  const properties = contactPropertiesRepo(database.db);
  for (const p of [property('city', 'string'), property('age', 'number'), property('vip', 'boolean')]) await properties.insertIfAbsent(p);
  const rows = Array.from({ length: 40 }, (_, i) => [
    { contact_id: `c${i}`, key: 'city', team_id: team, text_value: `city-${i % 4}`, num_value: null },
    { contact_id: `c${i}`, key: 'age', team_id: team, text_value: null, num_value: 20 + i },
    { contact_id: `c${i}`, key: 'vip', team_id: team, text_value: null, num_value: i % 2 },
  ]).flat();
  await contactsBatchRepo(database.db).setValues(rows);
}

const count = (test: RawBuilder<unknown>, key: string) =>
  sql<{ n: number }>`select count(*) as n from contact_property_values d where d.team_id = ${team} and d.key = ${key} and ${test}`;
const ranges: [string, string, RawBuilder<unknown>, number][] = [
  ['text eq', 'city', sql`d.text_value = ${'city-1'}`, 10],
  ['text in', 'city', sql`d.text_value in (${'city-1'}, ${'city-2'})`, 20],
  ['number gt', 'age', sql`d.num_value > ${49}`, 10],
  ['number gte and lt', 'age', sql`d.num_value >= ${30} and d.num_value < ${35}`, 5],
  ['number lte', 'age', sql`d.num_value <= ${21}`, 2],
  ['boolean eq', 'vip', sql`d.num_value = ${1}`, 20],
];
const indexOf = (key: string) => (key === 'city' ? 'contact_property_values_text' : 'contact_property_values_num');

async function countsAndDelete(t: Test, database: Database): Promise<void> {
  for (const [name, key, test, expected] of ranges) {
    const row = (await count(test, key).execute(database.db)).rows[0];
    t.equal(Number(row?.n), expected, `${name}: the count`);
  }
  const properties = contactPropertiesRepo(database.db);
  t.ok(await properties.delete(property('city', 'string')), 'a string property deleted');
  t.ok(await properties.delete(property('vip', 'boolean')), 'a boolean property deleted');
  const left = await sql<{ key: string; n: number }>`select key, count(*) as n from contact_property_values group by key`.execute(database.db);
  t.same(left.rows.map((r) => [r.key, Number(r.n)]), [['age', 40]], 'their values are gone, of either kind; the others stay');
}

t.test('SQLite', async (t) => {
  const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
  t.teardown(() => database.close());
  await seed(database);
  const definitions = database.sqlite.prepare("select name, sql from sqlite_master where name like 'contact_property_values_%'").all() as { name: string; sql: string }[];
  t.match(Object.fromEntries(definitions.map((d) => [d.name, d.sql])), {
    contact_property_values_text: /where "text_value" is not null$/, contact_property_values_num: /where "num_value" is not null$/,
  }, 'each index is partial');
  for (const [name, key, test] of ranges) {
    const plan = await sql<{ detail: string }>`explain query plan ${count(test, key)}`.execute(database.db);
    t.match(plan.rows.map((p) => p.detail).join('\n'), new RegExp(`USING COVERING INDEX ${indexOf(key)} `), `${name}: read from ${indexOf(key)}`);
  }
  await countsAndDelete(t, database);
});

t.test('PostgreSQL', async (t) => {
  const pg = await createTestDatabase();
  const database = await openDatabase({ url: pg.url, path: '/nonexistent/svc.sqlite', synchronous: 'FULL' });
  t.teardown(async () => { await database.close(); await pg.drop(); });
  await seed(database);
  // A handful of rows reads faster in a scan; without scans the planner shows which index fits.
  for (const [name, key, test] of ranges) {
    const plan = await database.db.connection().execute(async (conn) => {
      await sql`set enable_seqscan = off`.execute(conn);
      return sql<{ 'QUERY PLAN': string }>`explain ${count(test, key)}`.execute(conn);
    });
    t.match(plan.rows.map((p) => p['QUERY PLAN']).join('\n'), new RegExp(`Index Only Scan using ${indexOf(key)} `), `${name}: read from ${indexOf(key)}`);
  }
  await countsAndDelete(t, database);
});
