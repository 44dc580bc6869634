import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../storage/sql/index.js';
import { consentRepo, type ConsentRecordRow } from '../../storage/repos/index.js';
import { createTestDatabase } from '../helpers/postgres.js';

// The consent trail is found by address hash only once its contact is erased (migration 034): the
// index on the hash is partial (contact_id null), so a live contact's records, an import's
// thousands among them, never land in it. Erasure detaches the records, and from then on the
// hash finds the whole trail, on SQLite and on PostgreSQL, through that index.
const dir = mkdtempSync(join(tmpdir(), 'svc-consent-rows-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const record = (id: string, contactId: string | null, hash: string, kind: ConsentRecordRow['kind'], value: string): ConsentRecordRow => ({
  id, team_id: 'team-1', contact_id: contactId, email_hash: hash, kind, topic_id: null, value,
  source: 'api', ip: null, user_agent: null, created_at: '2026-11-29T00:00:00.000Z',
});

async function trailByHash(t: Test, database: Database): Promise<void> {
  const consent = consentRepo(database.db);
  await consent.insert(record('r1', 'contact-a', 'hash-a', 'subscription', 'subscribed'));
  await consent.insert(record('r2', 'contact-a', 'hash-a', 'subscription', 'unsubscribed'));
  await consent.insert(record('r3', 'contact-b', 'hash-b', 'subscription', 'subscribed'));
  t.same(await consent.ofHash('team-1', 'hash-a'), [], 'a live contact\'s trail is read by its id, not its hash');
  t.equal((await consent.ofContact('team-1', 'contact-a')).length, 2);

  t.equal(await consent.detachContact('team-1', 'contact-a'), 2);
  await consent.insert(record('r4', null, 'hash-a', 'erasure', 'erased'));
  const trail = await consent.ofHash('team-1', 'hash-a');
  t.same(trail.map((r) => [r.id, r.kind, r.value, r.contact_id]), [
    ['r1', 'subscription', 'subscribed', null], ['r2', 'subscription', 'unsubscribed', null], ['r4', 'erasure', 'erased', null],
  ], 'after erasure the hash finds the whole trail, opt-out included');
  t.same(await consent.ofHash('team-1', 'hash-b'), [], 'another contact untouched');
}

const erasedCheck = sql`select 1 from consent_records where team_id = ${'team-1'} and email_hash = ${'hash-a'}
  and kind = 'erasure' and contact_id is null`;

t.test('SQLite', async (t) => {
  const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
  t.teardown(() => database.close());
  await trailByHash(t, database);
  // The erased-address check of contacts added from sends (repos/contacts.ts addContactFromSend).
  const plan = await sql<{ detail: string }>`explain query plan ${erasedCheck}`.execute(database.db);
  t.match(plan.rows.map((p) => p.detail).join('\n'), /USING (COVERING )?INDEX consent_records_erased_hash/);
});

t.test('PostgreSQL', async (t) => {
  const pg = await createTestDatabase();
  const database = await openDatabase({ url: pg.url, path: '/nonexistent/svc.sqlite', synchronous: 'FULL' });
  t.teardown(async () => { await database.close(); await pg.drop(); });
  await trailByHash(t, database);
  // A handful of rows reads faster in a scan; without scans the planner shows the index fits.
  const plan = await database.db.connection().execute(async (conn) => {
    await sql`set enable_seqscan = off`.execute(conn);
    return sql<{ 'QUERY PLAN': string }>`explain ${erasedCheck}`.execute(conn);
  });
  t.match(plan.rows.map((p) => p['QUERY PLAN']).join('\n'), /consent_records_erased_hash/);
});
