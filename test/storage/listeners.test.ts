import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { groupCommit, inRelaxedWriteTransaction, inTransaction, openDatabase, type Database } from '../../storage/sql/index.js';
import { teamListensTo, webhooksRepo, type WebhookEndpointRow } from '../../storage/repos/index.js';
import { createTestDatabase } from '../helpers/postgres.js';

// Whether a team's enabled endpoints subscribe to an event type (written only then, core/outbox):
// read once per team in a transaction that many writes share, read afresh in the next one, and
// every time outside a transaction. On SQLite and on PostgreSQL.
const dir = mkdtempSync(join(tmpdir(), 'svc-listeners-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const endpoint = (id: string, teamId: string, events: string[], status: WebhookEndpointRow['status'] = 'enabled'): WebhookEndpointRow => ({
  id, team_id: teamId, url: `https://hooks.example.net/${id}`, events: JSON.stringify(events), status,
  secret_sealed: 'sealed', previous_secret_sealed: null, previous_secret_expires_at: null, from_seq: 0,
  disabled_reason: null, created_at: '2026-11-29T00:00:00.000Z', updated_at: '2026-11-29T00:00:00.000Z',
});

async function listeners(t: Test, database: Database): Promise<void> {
  const { db } = database;
  const repo = webhooksRepo(db);
  await repo.insertEndpoint(endpoint('e1', 'team-a', ['automation.run.completed']));
  await repo.insertEndpoint(endpoint('e2', 'team-a', ['email.sent', 'automation.run.started']));
  await repo.insertEndpoint(endpoint('e3', 'team-b', ['automation.run.completed'], 'disabled'));

  t.equal(await teamListensTo(db, 'team-a', 'automation.run.completed'), true, 'one endpoint subscribes');
  t.equal(await teamListensTo(db, 'team-a', 'automation.run.started'), true, 'another endpoint of the team subscribes');
  t.equal(await teamListensTo(db, 'team-a', 'automation.run.failed'), false, 'no endpoint subscribes');
  t.equal(await teamListensTo(db, 'team-b', 'automation.run.completed'), false, 'a disabled endpoint does not listen');
  t.equal(await teamListensTo(db, 'team-c', 'automation.run.completed'), false, 'a team without endpoints');

  // Outside a transaction every question is read afresh.
  await repo.insertEndpoint(endpoint('e4', 'team-c', ['automation.run.failed']));
  t.equal(await teamListensTo(db, 'team-c', 'automation.run.failed'), true, 'an endpoint added since is seen at once');

  // Inside one, the first answer holds for its rest: writes sharing a group commit ask once.
  const inside = await inTransaction(db, async (trx) => {
    const before = await teamListensTo(trx, 'team-a', 'automation.run.failed');
    await webhooksRepo(trx).insertEndpoint(endpoint('e5', 'team-a', ['automation.run.failed']));
    return [before, await teamListensTo(trx, 'team-a', 'automation.run.failed')];
  });
  t.same(inside, [false, false], 'read once per team per transaction');
  const commits = groupCommit(db);
  const shared = await Promise.all([1, 2, 3].map(() => commits.run((trx) => teamListensTo(trx, 'team-a', 'automation.run.failed'))));
  t.same(shared, [true, true, true], 'the next transaction reads the endpoint committed before it');
  t.equal(await inRelaxedWriteTransaction(db, (trx) => teamListensTo(trx, 'team-b', 'automation.run.completed')), false);
}

t.test('SQLite', async (t) => {
  const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
  t.teardown(() => database.close());
  await listeners(t, database);
});

t.test('PostgreSQL', async (t) => {
  const pg = await createTestDatabase();
  const database = await openDatabase({ url: pg.url, path: '/nonexistent/svc.sqlite', synchronous: 'FULL' });
  t.teardown(async () => { await database.close(); await pg.drop(); });
  await listeners(t, database);
});
